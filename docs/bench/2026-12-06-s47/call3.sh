#!/usr/bin/env bash
# Session 47, call 3 (branch s47-timeline, `.carry_tl`): call 2's timeline per CTA (TUNETAB_TIMELINE_DUMP): which
# CTAs' K loops are the slow ones (call 2: the slowest CTA's K loop up to 1.8 us longer than the median one's), by
# tile row, tile column and SM; twice, to see whether the same SMs are slow. Outputs: cta1.csv, cta2.csv, run*.log.
#   usage: OUT=... bash docs/bench/2026-12-06-s47/call3.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t="m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1,m128n96k128_w64x96_s6_tma4_sk1"
spec="304,4096,2048:$t;336,4096,2048:$t;304,4096,4096:m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1"
for r in 1 2; do
  echo "M,N,K,config,bx,by,smid,entry,scales,stage0,kloop_end,stores,producer_first,producer_end,kloop_cycles,epilogue_cycles" > "$OUT/cta$r.csv"
  TUNETAB_TIMELINE=1 TUNETAB_TIMELINE_DUMP="$OUT/cta$r.csv" TUNETAB_TIME_FP8="$spec" .carry_tl/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/run$r.log" 2>&1
  echo "run $r: rc=$?"; grep -E "^TIME " "$OUT/run$r.log"
done
python3 docs/bench/2026-12-06-s47/cta_report.py "$OUT/cta1.csv" "$OUT/cta2.csv"
