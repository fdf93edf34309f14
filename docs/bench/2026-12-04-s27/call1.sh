#!/usr/bin/env bash
# Session 27, call 1: tma2 with ordered MMAs ("_ord": the consumers issue each K block's MMAs in turn), compile-checked
# only until now. 1) the ragged-shape test (six ordered configs: 2 and 4 consumers, setmaxnreg, split-K, persistent);
# 2) the timing tool, two rounds: each exported row's config (runs/glm5) against its ordered twin at the dense misses.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
timeout 300 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
echo "ragged rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/ragged.log" | head -n 20
C="k128_w64x"
pair() { echo "$1_sk1,$1_ord_sk1"; }
spec="336,3072,6144:$(pair m128n96${C}96_s4_tma2),$(pair m64n192${C}96_s4_tma2),$(pair m128n192${C}192_s4_tma2)"
spec="$spec;512,3072,6144:$(pair m128n96${C}96_s4_tma2)"
spec="$spec;304,2624,6144:$(pair m128n96${C}96_s4_tma2)"
spec="$spec;336,4096,2048:$(pair m128n128${C}128_s4_tma2),$(pair m128n64${C}64_s4_tma2)"
spec="$spec;336,3584,512:$(pair m128n128${C}128_s4_tma2)"
spec="$spec;256,6144,2048:$(pair m128n96${C}96_s4_tma2)"
spec="$spec;256,6144,1536:$(pair m128n96${C}96_s4_tma2)"
spec="$spec;1024,4096,2048:m128n128${C}128_s4_tma2_p132_sk1,m128n128${C}128_s4_tma2_ord_p132_sk1,$(pair m128n128${C}128_s4_tma2)"
spec="$spec;2048,2048,2048:m128n128${C}128_s4_tma2_p132_sk1,m128n128${C}128_s4_tma2_ord_p132_sk1,$(pair m128n128${C}128_s4_tma2)"
spec="$spec;1024,3584,512:m128n128${C}128_s4_tma2_p132_sk1,m128n128${C}128_s4_tma2_ord_p132_sk1"
spec="$spec;1024,2048,2048:$(pair m128n128${C}128_s4_tma2)"
spec="$spec;4096,6144,2048:$(pair m128n192${C}192_s4_tma2)"
for r in 1 2; do
  TUNETAB_TIME_FP8="$spec" timeout 150 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time$r.log" 2>&1
  echo "time round $r rc=$? $((SECONDS - t0)) s"
done
paste <(grep -E "^TIME" "$OUT/time1.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/; s/median_us=//') \
      <(grep -E "^TIME" "$OUT/time2.log" | sed -E 's/.*median_us=([0-9.]+).*/\1/')
grep -E "Failure|FAILED" "$OUT/time1.log" "$OUT/time2.log" | head
echo "total $((SECONDS - t0)) s"
