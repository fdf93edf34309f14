#!/usr/bin/env bash
# Session 47, call 2 (branch s47-timeline; `.carry_tl/tunetab_gpu_tests` = its build): where a tma4 launch's time goes
# in the benchmark's back-to-back replays. With TUNETAB_TIMELINE=1 each tma4 CTA records %globaltimer at its entry,
# its consumers' scale wait, stage 0 full, the K loop's end and its stores issued, and its producer's first copy and
# end (the last replayed launch's CTAs); the test prints min/median/max over the CTAs. Rotating inputs (the method),
# then operands in L2 (TUNETAB_TIME_SETS=1); cuBLASLt in the same call. Outputs: timeline_rot.log, timeline_l2.log,
# fp8_baseline.log.
#   usage: OUT=... bash docs/bench/2026-12-06-s47/call2.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t="m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn2_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1,m128n96k128_w64x96_s6_tma4_sk1"
spec="304,4096,2048:$t;336,4096,2048:$t;304,4096,4096:m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn2_sk1;304,4096,512:m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn2_sk1"
for mode in rot l2; do
  sets=; [ $mode = l2 ] && sets=1
  TUNETAB_TIMELINE=1 TUNETAB_TIME_SETS=$sets TUNETAB_TIME_FP8="$spec" .carry_tl/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/timeline_$mode.log" 2>&1
  echo "== $mode: rc=$?"; grep -E "^(TIME|TIMELINE)" "$OUT/timeline_$mode.log"
done
(cd bench && python3 fp8_baseline.py --shapes "304,4096,2048;336,4096,2048;304,4096,4096;304,4096,512") > "$OUT/fp8_baseline.log" 2>&1
cat "$OUT/fp8_baseline.log"
(cd bench && TUNETAB_TIME_SETS=1 python3 fp8_baseline.py --shapes "304,4096,2048;336,4096,2048;304,4096,4096;304,4096,512") 2>&1 | sed 's/^/L2 /'
