#!/usr/bin/env bash
# Session 12, call 3: wgmma MoE tiles outside the enumerated space (stage-1 and stage-2 rows of W per CTA
# combined differently), timed beside the exported rows' configs by the MoE timing tool (binaries of 2cac9b3),
# then Nsight Compute on the exported config at M=336 and M=4096. Everything returns in one tar.
set -uo pipefail
cd "$(dirname "$0")/../../.."
o=$OUT/s12c3; mkdir -p "$o"
cur=fp8_m32w32_n256x256_k128_s3_wgmma_sk1
mid="$cur,fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m32w32_n256x64_k128_s3_wgmma_sk1,fp8_m64w32_n256x128_k128_s3_wgmma_sk1,fp8_m64w64_n128x256_k128_s3_wgmma_sk1,fp8_m64w64_n128x256_k128_s4_wgmma_sk1"
big="$cur,fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m64w32_n256x128_k128_s3_wgmma_sk1,fp8_m64w64_n128x256_k128_s4_wgmma_sk1,fp8_m128w64_n128x128_k128_s4_wgmma_sk1,fp8_m128w64_n128x256_k128_s4_wgmma_sk1,fp8_m128w32_n256x128_k128_s3_wgmma_sk1"
small="fp8_m32w32_n128x128_k128_s3_wgmma_sk1,fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m32w32_n256x64_k128_s3_wgmma_sk1,fp8_m32w32_n128x64_k128_s3_wgmma_sk1,$cur"
spec="128:$small;256:$mid;256,skewed:$mid;304:$mid;336:$mid;336,skewed:$mid;512:$mid;4096:$big;4096,skewed:$big"
t0=$SECONDS
TUNETAB_TIME_MOE="$spec" .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/moe_time.log" 2>&1
echo "timing rc=$? $((SECONDS - t0)) s"; grep '^TIME' "$o/moe_time.log" | sed 's/ min_us.*weights/ weights/'
OUT=$o MOE="336:$cur;4096:$cur" FP8= bash scripts/profile_fp8_moe.sh > "$o/ncu_digest.txt" 2>&1
echo "ncu rc=$? $((SECONDS - t0)) s"
tar czf "$OUT/s12c3.tgz" -C "$OUT" s12c3 && rm -rf "$o"
