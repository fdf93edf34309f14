#!/usr/bin/env bash
# Session 38's H200 call: the FP8 keys re-tuned with M 257..352 swept over the whole config space (the 64 x 96 tma2
# tile among them), resumed from runs/glm5.db.gz (or build/glm5.db on a warm machine), then, if the tune finished
# (rc 0), issue 6's benchmark on the tables it exported, in the same call. On another GPU it stops at once (the
# database holds H200 rows). Outputs: glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz.
#   usage: OUT=... bash docs/bench/2026-12-05-s38/call.sh   (env TOTAL_S=575, TUNE_ARGS)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-575}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
[[ $gpu == *H200* ]] || { echo "not an H200: stopped"; exit 3; }
env BIN=.carry OUT="$OUT" BUDGET_S=$(($(left) - 75)) TUNE_ARGS="${TUNE_ARGS:---families gemm_fp8_blockscale --sweep-rows 257-352}" \
  bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune.tail" 2>&1
rc=$?
echo "tune rc=$rc at $((SECONDS - t0)) s"; grep -E "^rc=|gaps" "$OUT/glm5.tune.log" | tail -n 6 | cut -c1-200
if [ $rc = 0 ]; then
  parts=fp8; [ "$(left)" -ge 120 ] && parts="fp8 moe"
  timeout $(($(left) - 5)) env BIN=.carry OUT="$OUT/bench" TABLES=build/glm5 PARTS="$parts" bash scripts/bench_fp8_moe.sh \
    > "$OUT/bench.out" 2>&1
  echo "bench ($parts) rc=$? at $((SECONDS - t0)) s"; grep -E "^Worst ratio|roofline" "$OUT/bench.out" | cut -c1-300
  cp "$OUT/bench.out" "$OUT/bench/" 2>/dev/null; tar czf "$OUT/bench.tgz" -C "$OUT" bench && rm -rf "$OUT/bench"
fi
echo "total $((SECONDS - t0)) s"
