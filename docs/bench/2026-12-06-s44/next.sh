#!/usr/bin/env bash
# For the next session's device calls: issue 6's acceptance on the GPU that comes. On an H200, call3.sh (the H200
# re-tune from runs/glm5.db.gz and the benchmark). On an H100, the H100 tune resumed from runs/glm5-h100.db.gz (its nine
# FP8 keys are done: session 44's calls 4-5) with every family (the bf16 keys, then the fused MoE), then, if it ends
# with rc 0 (gaps: none), issue 6's benchmark on its tables in the same call (PARTS fp8 and moe if 150 s are left).
# Outputs: glm5*.tune.log, glm5*.db.gz, glm5*.tables.tgz, bench.tgz.
#   usage: OUT=... bash docs/bench/2026-12-06-s44/next.sh   (env TOTAL_S=575, TUNE_ARGS)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-575}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
[[ $gpu == *H200* ]] && exec bash docs/bench/2026-12-06-s44/call3.sh
[[ $gpu == *H100* ]] || { echo "neither an H200 nor an H100: stopped"; exit 0; }
env BIN=.carry OUT="$OUT" BUDGET_S=$(($(left) - 30)) TUNE_ARGS="${TUNE_ARGS:-}" \
  bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h100.cfg glm5-h100 > "$OUT/tune.tail" 2>&1
rc=$?
echo "tune rc=$rc at $((SECONDS - t0)) s"; grep -E "^\[|key done|^rc=|gaps|summary" "$OUT/glm5-h100.tune.log" | cut -c1-160
if [ $rc = 0 ] && [ "$(left)" -ge 60 ]; then
  parts=fp8; [ "$(left)" -ge 150 ] && parts="fp8 moe"
  timeout $(($(left) - 5)) env BIN=.carry OUT="$OUT/bench" TABLES=build/glm5-h100 PARTS="$parts" bash scripts/bench_fp8_moe.sh \
    > "$OUT/bench.out" 2>&1
  echo "bench ($parts) rc=$? at $((SECONDS - t0)) s"; grep -E "^Worst ratio|roofline" "$OUT/bench.out" | cut -c1-300
  cp "$OUT/bench.out" "$OUT/bench/" 2>/dev/null; tar czf "$OUT/bench.tgz" -C "$OUT" bench && rm -rf "$OUT/bench"
fi
echo "total $((SECONDS - t0)) s"
