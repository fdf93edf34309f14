#!/usr/bin/env bash
# Session 29, call 6: the stage-1 quantization did not pay (calls 4-5) and is not kept; HEAD's binaries (24110e4).
# Finishes the profile tune that session 28's call 5 left unfinished in its MoE key (runs/glm5.db.gz: finals over
# another sample of Ms re-ranked), then, with what is left of the call, the MoE and FP8 benchmarks on its tables.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-580}
rm -f build/glm5.db
BIN=.carry BUDGET_S=$((total - 200)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
if [ $rc = 0 ]; then
  for part in moe fp8; do
    left=$((total - (SECONDS - t0)))
    need=$([ $part = moe ] && echo 80 || echo 130)
    if [ $left -lt $need ]; then echo "bench $part skipped: $left s left"; continue; fi
    timeout $((left - 5)) env BIN=.carry OUT=$OUT/b TABLES=build/glm5 PARTS=$part bash scripts/bench_fp8_moe.sh > "$OUT/bench_$part.out" 2>&1
    echo "bench $part rc=$? $((SECONDS - t0)) s"
  done
fi
echo "total $((SECONDS - t0)) s"
