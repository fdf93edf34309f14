#!/usr/bin/env bash
# Session 18, call 2: the final binaries (.carry: c1bafbc, whose kernels are 84dd78b's) through the first half of
# scripts/gpu_check.sh (unit, GemmFp8Gpu.*, MoeGpu.* with the new odd-K-block case); then one question about call 1's
# loss: .carry_b is the same kernel with each half's four k32 MMAs issued in sequence instead of interleaved with the
# other half's (both halves read the same token tile): does the order alone cost time?
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
PARTS="unit gpu" GPU_TESTS='GemmFp8Gpu.*:MoeGpu.*:MoeGpuConfigs.*' BIN=.carry bash scripts/gpu_check.sh > "$OUT/gpu_check1.out" 2>&1
echo "gpu_check part 1 rc=$? $((SECONDS - t0)) s"; tail -n 5 "$OUT/gpu_check1.out"
mv "$OUT/gpu_check.tgz" "$OUT/gpu_check1.tgz" 2>/dev/null
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1
spec="64:$S;304:$E,$W;336:$E,$W;512:$E"
for v in carry carry_b carry; do
  TUNETAB_TIME_MOE="$spec" timeout 60 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
  grep -oE "^TIME m=[0-9]+|fp8_\S+_wgmma2_sk1 median_us=[0-9.]+" "$OUT/time_$v.log" | paste - - | awk '{print $1, $2, $3}'
done
echo "total $((SECONDS - t0)) s"
