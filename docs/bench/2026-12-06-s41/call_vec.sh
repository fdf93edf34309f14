#!/usr/bin/env bash
# Session 41: branch s41-tma4-vec-scales (tma4 reading a chunk's scales in 16-byte loads) against main's tma4.
# .carry_vec/tunetab_gpu_tests is the branch's build, .carry/ main's. The branch's ragged-shape test, then both
# binaries' TUNETAB_TIME_FP8 of the same tma4 configs, alternating binaries (twice each).
#   usage: OUT=... bash docs/bench/2026-12-06-s41/call_vec.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 .carry_vec/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged_vec.log" 2>&1
echo "ragged (branch) rc=$? at $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|Failure" "$OUT/ragged_vec.log" | head -10
spec="336,3072,6144:m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1;"
spec+="304,4096,2048:m128n96k128_w64x96_s6_tma4_sk1,m64n192k128_w64x96_s4_tma4_sk1;"
spec+="256,6144,2048:m128n96k128_w64x96_s6_tma4_sk1;1024,4096,2048:m128n128k128_w64x128_s6_tma4_sk1;"
spec+="2048,6144,1536:m128n128k128_w64x128_s6_tma4_sk1"
for run in main vec main vec; do
  bin=.carry; [ $run = vec ] && bin=.carry_vec
  TUNETAB_TIME_FP8="$spec" timeout 60 $bin/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/t.log" 2>&1
  echo "time $run rc=$?"; grep -h "^TIME\|Failure" "$OUT/t.log" | sed "s/,in=e4m3fn,out=bf16,scale=1x128x128//; s/^TIME/TIME $run/" | tee -a "$OUT/time.log"
done
rm -f "$OUT/t.log"; echo "total $((SECONDS - t0)) s"
