#!/usr/bin/env bash
# Session 19, call 1: wgmma2 with two token groups (block_m = 2 x warp_m: a consumer warpgroup per 64 rows of W and
# token group, so each W tile serves twice the tokens for the same registers a thread). Correctness first (MoeGpu.*,
# which runs two of the new configs on every test shape), then the pipeline's time against the exported rows'
# configs in the same process, then ncu SpeedOfLight on the stage kernels at M=336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
echo "MoeGpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error" "$OUT/moe_gpu.log" | head -20
E=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1   # the M=512 row's (serves 257..512)
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1   # the M=256 row's
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
G4=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1; G6=fp8_m128w64_n64x128_k128_s6_wgmma2_sk1
F4=fp8_m128w64_n64x64_k128_s4_wgmma2_sk1;  F6=fp8_m128w64_n64x64_k128_s6_wgmma2_sk1
H4=fp8_m64w32_n64x128_k128_s4_wgmma2_sk1;  H6=fp8_m64w32_n64x128_k128_s6_wgmma2_sk1
spec="128:S,E,H6;256:S,E,H4,H6,G6;304:E,W,G4,G6,F4,F6,H6;336:E,W,G4,G6,F4,F6,H6;512:E,G4,G6,F6;1024:E,G6"
TUNETAB_TIME_MOE="$spec" timeout 150 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_bal.log" 2>&1
echo "time balanced rc=$? $((SECONDS - t0)) s"; grep -E "^TIME|FAILED|Failure" "$OUT/time_bal.log" | cut -c1-200
spec="256,skewed:S,E,H6,G6;336,skewed:E,W,G4,G6,F6,H6;512,skewed:E,G6,F6"
TUNETAB_TIME_MOE="$spec" timeout 120 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_skew.log" 2>&1
echo "time skewed rc=$? $((SECONDS - t0)) s"; grep -E "^TIME|FAILED|Failure" "$OUT/time_skew.log" | cut -c1-200
for c in $E $G6; do
  TUNETAB_TIME_MOE="336:$c" timeout 60 ncu --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/sol_$c.txt" 2>&1
  echo "== ncu $c ($((SECONDS - t0)) s)"
  grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput" "$OUT/sol_$c.txt" | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - - | awk '{$1=$1; print}' | cut -c1-220
done
echo "total $((SECONDS - t0)) s"
