#!/usr/bin/env bash
# Session 23, call 3 (branch s23-tma2-w96): tma2 with two 96-column consumer warpgroups (m64n192_w64x96,
# m128n96_w64x96) against the exported row's config at the dense shapes issue 6's floor missed, one binary
# (.carry_w). The timing tool validates each config at each shape first (against the Eigen reference).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
W="m64n192k128_w64x96_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk1"
spec=""
while read -r shape row; do spec="$spec${spec:+;}$shape:$W,$row"; done <<'LIST'
336,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
304,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
512,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
336,2624,6144 m64n192k128_w64x192_s4_tma2_sk1
336,4096,2048 m128n128k128_w64x128_s4_tma2_sk1
256,6144,2048 m64n192k128_w64x192_s4_tma2_sk1
256,6144,1536 m64n192k128_w64x192_s4_tma2_sk1
336,3584,512 m128n128k128_w64x128_s4_tma2_sk1
1024,4096,2048 m128n128k128_w64x128_s4_tma2_sk1
2048,2048,2048 m128n128k128_w64x128_s4_tma2_sk1
1024,3584,512 m128n128k128_w64x128_s4_tma2_sk1
LIST
TUNETAB_TIME_FP8="$spec" timeout ${LIMIT_S:-100} .carry_w/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/w96_time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME|Failure|FAILED|PASSED" "$OUT/w96_time.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/'
