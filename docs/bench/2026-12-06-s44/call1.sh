#!/usr/bin/env bash
# Session 44's device call. On an H200: session 41's call.sh with TIMES=0 (the FP8 re-tune with tma4 and its clusters
# in the space, resumed from runs/glm5.db.gz, then the benchmark on its tables). On another GPU: does tma4's K loop
# lose time where each chunk of 4 K blocks ends with nothing in flight? HEAD's binaries (.carry, chunks of 4) against
# chunks of 8 (.carry_x8) and 16 (.carry_x16): the ragged-shape test on the candidates' tma4 configs, then 128 x 128 and
# 128 x 96, plain and in clusters, at the M 256-336 shapes, the three binaries in turn, twice; cuBLASLt.
# Outputs: (H200) glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz; (else) ragged.*.log, time.*.log, cublaslt.*.
#   usage: OUT=... bash docs/bench/2026-12-06-s44/call1.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [[ $gpu == *H200* ]]; then
  OUT=$OUT TIMES=0 TOTAL_S=${TOTAL_S:-570} bash docs/bench/2026-12-06-s41/call.sh
  exit $?
fi
for b in x8 x16; do
  TUNETAB_FP8_ONLY=tma4 timeout 150 .carry_$b/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' \
    > "$OUT/ragged.$b.log" 2>&1
  echo "ragged tma4 ($b) rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|Failure" "$OUT/ragged.$b.log" | head -6
done
shapes="304,4096,2048 336,4096,2048 256,6144,2048 304,4096,4096 336,3072,6144"
spec="" 
for shape in $shapes; do
  spec+="$shape:m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn2_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_cn4_sk1;"
done
for b in "" _x8 _x16 _x16 _x8 ""; do
  TUNETAB_TIME_FP8="${spec%;}" timeout 60 .carry$b/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    >> "$OUT/time${b:-_head}.log" 2>&1
  echo "time (${b:-head}) rc=$? at $((SECONDS - t0)) s"
done
for b in _head _x8 _x16; do
  echo "== $b"; grep -h "^TIME\|Failure" "$OUT/time$b.log" | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w64x[0-9]*//; s/ min_us.*//'
done
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
  > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 6 "$OUT/cublaslt.log"
echo "total $((SECONDS - t0)) s"
