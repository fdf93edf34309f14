#!/usr/bin/env bash
# Session 25, call 2: tma2's split-K with its own finish (the consumers store their fragments to the split's plane;
# one thread counts the arrival with gpu-scope fences; the last split's consumers read the planes back in split
# order and store the tile through shared memory as split-K 1 does). .carry = the change, .carry_b = c7acb88
# (the bf16 family's splitk_finish). 1) the ragged-shape test on the change; 2) the timing tool (each config
# validated first) on both binaries, same spec; 3) if the test passed, the profile tune resumed from runs/glm5.db.gz
# on the change (tma2's verdicts are re-keyed) for the rest of the call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
timeout 240 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
trc=$?
echo "ragged rc=$trc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/ragged.log" | head -n 20
C="k128_w64x"
spec="336,3072,6144:m128n96${C}96_s4_tma2_sk1,m128n96${C}96_s4_tma2_sk2,m128n96${C}96_s4_tma2_sk4,m128n192${C}192_s4_tma2_sk2"
spec="$spec;128,512,6144:m64n64${C}64_s4_tma2_sk1,m64n64${C}64_s4_tma2_sk2,m64n64${C}64_s4_tma2_sk4"
spec="$spec;16,3072,6144:m64n128${C}64_s4_tma2_sk4,m64n64${C}64_s4_tma2_sk4,m64n128${C}64_s4_tma2_sk1"
spec="$spec;336,4096,2048:m128n128${C}128_s4_tma2_sk1,m128n192${C}192_s4_tma2_sk2,m128n96${C}96_s4_tma2_sk1,m128n96${C}96_s4_tma2_sk2"
spec="$spec;1024,3584,512:m128n128${C}128_s4_tma2_sk1,m128n128${C}128_s4_tma2_sk2"
spec="$spec;2048,2048,2048:m128n128${C}128_s4_tma2_sk1,m128n192${C}192_s4_tma2_sk1"
spec="$spec;4096,3072,6144:m128n192${C}192_s4_tma2_sk1"
spec="$spec;256,6144,2048:m128n96${C}96_s4_tma2_sk1,m128n96${C}96_s4_tma2_sk2,m128n192${C}192_s4_tma2_sk2"
spec="$spec;4096,512,6144:m64n256${C}128_s4_tma2_sk1,m128n128${C}128_s4_tma2_sk1"
for b in .carry .carry_b; do
  TUNETAB_TIME_FP8="$spec" timeout 150 $b/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time${b#.carry}.log" 2>&1
  echo "time $b rc=$? $((SECONDS - t0)) s"
done
paste <(grep -E "^TIME" "$OUT/time.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/; s/median_us=//') \
      <(grep -E "^TIME" "$OUT/time_b.log" | sed -E 's/.*median_us=([0-9.]+).*/\1/')
grep -E "Failure|FAILED" "$OUT/time.log" "$OUT/time_b.log" | head
left=$((end - (SECONDS - t0)))
if [ $trc -eq 0 ] && [ $left -ge 60 ]; then
  rm -f build/glm5.db
  BIN=.carry BUDGET_S=$((left - 15)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
