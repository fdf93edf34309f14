#!/usr/bin/env bash
# Session 26, call 1 (b1a7548's binaries: kSplitK template parameter, persistent tma2_p132, both compile-checked only
# until now): 1) the ragged-shape test (covers kSplitK, tma2_p132 and the shape 1100 x 3000 x 1536); 2) the timing
# tool (each config validated first): tma2_p132 against tma2 split-K 1 at the four M >= 1024 misses; 3) if the test
# passed, the profile tune resumed from runs/glm5.db.gz (every tma2 verdict is re-keyed) for the rest of the call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
timeout 240 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
trc=$?
echo "ragged rc=$trc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/ragged.log" | head -n 20
C="k128_w64x"
spec="1024,3584,512:m128n128${C}128_s4_tma2_sk1,m128n128${C}128_s4_tma2_p132_sk1,m128n192${C}192_s4_tma2_p132_sk1,m128n96${C}96_s4_tma2_p132_sk1,m64n64${C}64_s4_tma2_p132_sk1"
spec="$spec;4096,3584,512:m128n192${C}192_s4_tma2_sk1,m128n192${C}192_s4_tma2_p132_sk1,m128n128${C}128_s4_tma2_p132_sk1"
spec="$spec;2048,2048,2048:m128n128${C}128_s4_tma2_sk1,m128n128${C}128_s4_tma2_p132_sk1,m128n192${C}192_s4_tma2_p132_sk1"
spec="$spec;1024,4096,2048:m128n128${C}128_s4_tma2_sk1,m128n128${C}128_s4_tma2_p132_sk1,m128n192${C}192_s4_tma2_p132_sk1"
spec="$spec;4096,3072,6144:m128n192${C}192_s4_tma2_sk1,m128n192${C}192_s4_tma2_p132_sk1"
for r in 1 2; do
  TUNETAB_TIME_FP8="$spec" timeout 60 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time$r.log" 2>&1
  echo "time round $r rc=$? $((SECONDS - t0)) s"
done
paste <(grep -E "^TIME" "$OUT/time1.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/; s/median_us=//') \
      <(grep -E "^TIME" "$OUT/time2.log" | sed -E 's/.*median_us=([0-9.]+).*/\1/')
grep -E "Failure|FAILED" "$OUT/time1.log" "$OUT/time2.log" | head
left=$((end - (SECONDS - t0)))
if [ $trc -eq 0 ] && [ $left -ge 60 ]; then
  rm -f build/glm5.db
  BIN=.carry BUDGET_S=$((left - 15)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
