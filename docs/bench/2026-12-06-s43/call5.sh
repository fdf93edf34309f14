#!/usr/bin/env bash
# Session 43's fifth device call. On an H200: call.sh (the acceptance tune and benchmark). On another GPU: tma4 / tma3
# and cuBLASLt with the operands kept in L2 (TUNETAB_TIME_SETS=1) against the benchmark's rotation over 2x L2: is
# cuBLASLt's lead in back-to-back launches (calls 1-4) the L2 traffic its clusters save (then it grows with the
# operands in L2), or not? Binaries: .carry_t (the timing test with TUNETAB_TIME_SETS).
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call5.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then exec bash docs/bench/2026-12-06-s43/call.sh; fi
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
shapes="304,4096,512 304,4096,2048 336,3072,6144"
spec=""
for shape in $shapes; do spec+="$shape:m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma3_sk1,m128n96k128_w64x96_s6_tma4_sk1;"; done
for sets in rotate 1 rotate 1; do
  if [ "$sets" = 1 ]; then export TUNETAB_TIME_SETS=1; else unset TUNETAB_TIME_SETS; fi
  TUNETAB_TIME_FP8="${spec%;}" timeout 60 .carry_t/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' 2>&1 \
    | grep "^TIME\|Failure" | sed "s/,in=e4m3fn,out=bf16,scale=1x128x128//; s/^TIME/TIME sets=$sets/"
  (cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')") 2>&1 | grep -E "^[0-9]" \
    | sed "s/^/cuBLASLt sets=$sets /"
  echo "sets=$sets at $((SECONDS - t0)) s"
done | tee "$OUT/sets.txt"
echo "total $((SECONDS - t0)) s"
