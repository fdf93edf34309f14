#!/usr/bin/env bash
# Session 52, call 2: ov2 (branch s52-ov2: every partial tile with M >= kBlockM moves up to rows [M - kBlockM, M);
# 64-row boxes only where M < kBlockM or in a padding CTA). Call 1 measured ov (s51-ov.mbox: moving up only where no
# 64-row half lies wholly past M): it won at M 336 / 352 (geomean 0.979 / 0.986) but lost at 304 (1.013), where its
# tiles kept F's 64-row boxes and timed 2-7% slower than main's; ov's cn2 tiles, which moved up at 304, ran
# 0.92-1.02x (geomean 0.981).
# (carry .carry = main, .carry_x: ov2.tgz packs .carry_ab/ov2/{tunetab,tunetab_gpu_tests}.)
# - on an H200: docs/bench/2026-12-06-s46/next.sh (issue 6's acceptance, main's binaries).
# - on any other GPU: scripts/ab_fp8.sh, main against ov2, five tma4 configs and tma3's m128n96 s4 (a control) at
#   M 304, 336, 352, 384 on the eight dense FP8 keys, then ov2's ragged-shape test on tma4. If ov2 wins (geomean
#   B/A <= 1.0 at 304, <= 0.99 at 336 and 352, <= 1.01 at 384, the ragged test passes) and 300 s are left, the H100
#   database's FP8 keys re-tuned with ov2's binaries and the benchmark on its tables (scripts/tune_and_bench.sh).
#   Outputs: ab.tgz, ragged_b.log, ab.out; glm5-h100.tune.log, glm5-h100.db.gz, glm5-h100.tables.tgz, bench.tgz.
#   usage: OUT=... [TOTAL_S=575] [MS="304 336 352 384"] bash docs/bench/2026-12-07-s52/callov2.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-575}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] && exec env TOTAL_S=$total bash docs/bench/2026-12-06-s46/next.sh
tar xzf .carry_x/ov2.tgz
OUT=$OUT B=.carry_ab/ov2/tunetab_gpu_tests MS=${MS:-"304 336 352 384"} WIN="304:1.0 336:0.99 352:0.99 384:1.01" \
  CFGS="m128n96k128_w64x96_s4_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n128k128_w64x128_s6_tma4_sk1,m128n64k128_w64x64_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_cn2_sk1,m128n96k128_w64x96_s4_tma3_sk1" \
  bash scripts/ab_fp8.sh | tee "$OUT/ab.out"
won=$?
echo "A/B at $((SECONDS - t0)) s"
if [ $won = 0 ] && [ $((total - (SECONDS - t0))) -ge 300 ]; then
  TOTAL_S=$((total - (SECONDS - t0))) BIN=.carry_ab/ov2 TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" \
    bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5-h100
fi
echo "total $((SECONDS - t0)) s"
