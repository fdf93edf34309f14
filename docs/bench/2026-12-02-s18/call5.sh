#!/usr/bin/env bash
# Session 18, call 5: where the real stage kernels' time goes, by leaving parts out (H200.md's method): the same
# binaries with the consumers' promotion arithmetic left out (.carry_vB), the MMA left out (.carry_vC), or both
# (.carry_vD: the producer, the barriers and the epilogue alone), against the final kernels (.carry). The results
# are wrong by construction (the timing tool times them anyway; its validation fails). Per-kernel durations by ncu at
# M=336 for the exported M=512 row's config, and the pipeline's time at 304 and 336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
for v in carry carry_vB carry_vC carry_vD; do
  TUNETAB_TIME_MOE="304:$W;336:$E,$W" timeout 60 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "== $v ($((SECONDS - t0)) s)"; grep -oE "^TIME m=[0-9]+|fp8_\S+_wgmma2_sk1 median_us=[0-9.]+" "$OUT/time_$v.log" | paste -d' ' - -
  TUNETAB_TIME_MOE="336:$E" timeout 40 ncu --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/sol_$v.txt" 2>&1
  grep -E "^  void|Duration|DRAM Throughput|Compute \(SM\) Throughput" "$OUT/sol_$v.txt" | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - | awk '{$1=$1; print}' | cut -c1-160
done
echo "total $((SECONDS - t0)) s"
