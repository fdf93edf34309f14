#!/usr/bin/env bash
# Session 13, call 1 (binaries from scripts/build_device.sh in .carry/): the MoE configs 128 tokens wide with
# stage 1 paired into gate and up warpgroups (templates/moe_pairs.h): their GPU correctness test, an A/B against
# the best earlier pairing by the MoE timing tool, then the profile tune resumed for what is left of the budget.
#   usage (on the device): bash docs/bench/2026-12-02-s13/call1.sh [TUNE_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
o=$OUT/s13c1; mkdir -p "$o"
t0=$SECONDS
timeout 170 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.PipelineMatchesReferenceAcrossMRoutingAndDtype:MoeGpuConfigs.*' \
  > "$o/moe_gpu.log" 2>&1
echo "gpu rc=$? $((SECONDS - t0)) s"; grep -E '^\[  (PASSED|FAILED) |Failure|rel_l2' "$o/moe_gpu.log" | head -20
cur=fp8_m32w32_n256x128_k128_s3_wgmma_sk1
new=fp8_m128w128_n64x128_k128_s6_wgmma_sk1,fp8_m128w128_n64x128_k128_s4_wgmma_sk1,fp8_m128w128_n64x64_k128_s6_wgmma_sk1
set1="$cur,$new"
spec="128:fp8_m32w32_n128x128_k128_s3_wgmma_sk1,$new;256:$set1;256,skewed:$set1;304:$set1;336:$set1;336,skewed:$set1"
spec+=";512:$set1;1024:$set1;4096:$set1,fp8_m64w64_n128x256_k128_s3_wgmma_sk1;4096,skewed:$set1,fp8_m64w64_n128x256_k128_s4_wgmma_sk1"
t1=$SECONDS
timeout 200 env TUNETAB_TIME_MOE="$spec" .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/moe_time.log" 2>&1
echo "timing rc=$? $((SECONDS - t1)) s"; grep '^TIME' "$o/moe_time.log" | sed -E 's/m=([0-9]+),.*routing=([a-z]+) /M=\1 \2 /; s/ min_us.*weights/ weights/'
tar czf "$OUT/s13c1.tgz" -C "$OUT" s13c1 && rm -rf "$o"
left=$(( ${1:-560} - (SECONDS - t0) ))
if [ "$left" -gt 60 ]; then BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 | tail -n 25; fi
