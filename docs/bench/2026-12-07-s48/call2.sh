#!/usr/bin/env bash
# Session 48, call 2 (any GPU: a kernel change that this A/B may bring re-keys tma4's verdicts, so the H200's re-tune
# waits for it). Call 1 found the last tile row (M 256..303 of 304: 48 of 128 rows) the slow CTAs of the 128 x 96 and 128 x 128 tiles. A/B
# of three builds of the timeline branch, alternating A C D A C D: A = `.carry_tl` (session 47's per-CTA dump), C =
# `.carry_tl3` (branch s48-tail: A in 64-row boxes, a box wholly past M not copied, its warpgroup idle), D =
# `.carry_tl4` (branch s48-rev: tile rows in reverse launch order: a slow tile or a slow place?); then cuBLASLt.
# Last, the ragged-shape test on tma4's configs with `.carry_oob` (branch s48-oob: C's change as main would take it).
# Outputs: cta.tgz (the CSVs and logs), fp8_baseline.log, ragged_tma4.log.
#   usage: OUT=... bash docs/bench/2026-12-07-s48/call2.sh   (carry .carry and .carry_x: tl.tgz packs the builds)
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
tar xzf .carry_x/tl.tgz
t="m128n128k128_w64x128_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_cn4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1,m128n96k128_w64x96_s6_tma4_sk1"
spec="304,4096,2048:$t;336,4096,2048:$t;304,4096,4096:m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1;304,6144,2048:m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1;304,3072,6144:m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1"
mkdir -p "$OUT/cta"
for r in A1 C1 D1 A2 C2 D2; do
  case $r in A*) bin=.carry_tl ;; C*) bin=.carry_tl3 ;; D*) bin=.carry_tl4 ;; esac
  echo "M,N,K,config,bx,by,smid,entry,scales,stage0,kloop_end,stores,producer_first,producer_end,kloop_cycles,epilogue_cycles" > "$OUT/cta/cta$r.csv"
  TUNETAB_TIMELINE=1 TUNETAB_TIMELINE_DUMP="$OUT/cta/cta$r.csv" TUNETAB_TIME_FP8="$spec" $bin/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/cta/run$r.log" 2>&1
  echo "run $r ($bin): rc=$?"; grep -E "^TIME |FAIL|rel_l2" "$OUT/cta/run$r.log" | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//' | cut -c1-150
done
for r in A C D; do echo "=== $r"; python3 docs/bench/2026-12-06-s47/cta_report.py "$OUT/cta/cta${r}1.csv" "$OUT/cta/cta${r}2.csv" | grep -E "^==|tile row"; done
tar czf "$OUT/cta.tgz" -C "$OUT" cta && rm -rf "$OUT/cta"
(cd bench && python3 fp8_baseline.py --shapes "304,4096,2048;336,4096,2048;304,4096,4096;304,6144,2048;304,3072,6144") > "$OUT/fp8_baseline.log" 2>&1
grep -E "us|TB/s" "$OUT/fp8_baseline.log" | head -20
TUNETAB_FP8_ONLY=tma4 timeout 240 .carry_oob/tunetab_gpu_tests --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes > "$OUT/ragged_tma4.log" 2>&1
echo "ragged tma4 (s48-oob): rc=$?"; tail -n 4 "$OUT/ragged_tma4.log"
