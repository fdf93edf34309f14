#!/usr/bin/env bash
# Session 47, call 3 (branch s47-timeline): call 2's timeline per CTA (TUNETAB_TIMELINE_DUMP): which CTAs' K loops
# are the slow ones (call 2: the slowest CTA's K loop up to 1.8 us longer than the median one's), by tile row, tile
# column and SM; and an A/B of the branch's early fill (B, `.carry_tl2`: without a cluster, the TMA thread fills the
# first stages before the block barrier) against its parent (A, `.carry_tl`), alternating A B A B.
# Outputs: ctaA1.csv ctaB1.csv ctaA2.csv ctaB2.csv and their logs.
#   usage: OUT=... bash docs/bench/2026-12-06-s47/call3.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t="m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1,m128n96k128_w64x96_s6_tma4_sk1"
spec="304,4096,2048:$t;336,4096,2048:$t;304,4096,4096:m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1;304,4096,512:m128n128k128_w64x128_s6_tma4_sk1"
for r in A1 B1 A2 B2; do
  bin=.carry_tl; [[ $r == B* ]] && bin=.carry_tl2
  echo "M,N,K,config,bx,by,smid,entry,scales,stage0,kloop_end,stores,producer_first,producer_end,kloop_cycles,epilogue_cycles" > "$OUT/cta$r.csv"
  TUNETAB_TIMELINE=1 TUNETAB_TIMELINE_DUMP="$OUT/cta$r.csv" TUNETAB_TIME_FP8="$spec" $bin/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/run$r.log" 2>&1
  echo "run $r ($bin): rc=$?"; grep -E "^TIME " "$OUT/run$r.log" | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
done
for r in A B; do echo "=== $r"; python3 docs/bench/2026-12-06-s47/cta_report.py "$OUT/cta${r}1.csv" "$OUT/cta${r}2.csv"; done
