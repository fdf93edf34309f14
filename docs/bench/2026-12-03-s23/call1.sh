#!/usr/bin/env bash
# Session 23, call 1: the FP8 stream-K kernel's first GPU run. GemmFp8Gpu (ragged shapes and M=1 with the stream-K
# configs among them), then the FP8 timing tool on the dense shapes issue 6's floor missed (session 15): every
# stream-K tile against the exported row's config, one binary; then, if the tests passed, the profile tune resumed
# on runs/glm5.db.gz (the 9 FP8 keys judge the new configs), bounded by END_S.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
.carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*:-GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_tests.log" 2>&1
trc=$?
echo "GemmFp8Gpu rc=$trc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/fp8_tests.log" | head -n 20
SK="m64n64k128_w64x64_s4_streamk_p132_sk1,m64n128k128_w64x64_s4_streamk_p132_sk1,m64n128k128_w64x128_s4_streamk_p132_sk1,m64n192k128_w64x192_s4_streamk_p132_sk1,m64n256k128_w64x128_s4_streamk_p132_sk1,m128n64k128_w64x64_s4_streamk_p132_sk1,m128n128k128_w64x64_s4_streamk_p132_sk1,m128n128k128_w64x128_s4_streamk_p132_sk1,m128n192k128_w64x192_s4_streamk_p132_sk1"
spec=""
# M,N,K then the exported row's config (runs/glm5: the row serving that M)
while read -r shape row; do spec="$spec${spec:+;}$shape:$SK,$row"; done <<'LIST'
304,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
336,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
512,3072,6144 m64n192k128_w64x192_s4_tma2_sk1
336,2624,6144 m64n192k128_w64x192_s4_tma2_sk1
336,4096,2048 m128n128k128_w64x128_s4_tma2_sk1
304,4096,2048 m128n128k128_w64x128_s4_tma2_sk1
256,6144,2048 m64n192k128_w64x192_s4_tma2_sk1
256,6144,1536 m64n192k128_w64x192_s4_tma2_sk1
336,3584,512 m128n128k128_w64x128_s4_tma2_sk1
128,512,6144 m64n64k128_w64x64_s4_tma2_sk4
1024,3584,512 m128n128k128_w64x128_s4_tma2_sk1
1024,4096,2048 m128n128k128_w64x128_s4_tma2_sk1
2048,2048,2048 m128n128k128_w64x128_s4_tma2_sk1
LIST
TUNETAB_TIME_FP8="$spec" .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME" "$OUT/fp8_time.log" | sed -E 's/m=([0-9]+),n=([0-9]+),k=([0-9]+),[^ ]*/\1x\2x\3/; s/k128_w/_w/; s/ min_us.*//' | column -t
grep -E "Failure|FAILED" "$OUT/fp8_time.log" | head
left=$(( ${END_S:-585} - (SECONDS - t0) ))
if [ $trc -eq 0 ] && [ $left -ge 120 ]; then
  rm -f build/glm5.db
  BIN=.carry BUDGET_S=$((left - 15)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; tail -n 8 "$OUT/tune_tail.txt" | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
