#!/usr/bin/env bash
# Session 30, call 4: the tune with an anchor row at M=1024 (8d1d2ba), from call 1's database (runs/glm5.db.gz), then
# the FP8 benchmark on its tables if the call has time left (it has at most ~530 s: the session's device time).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-580}
rm -f build/glm5.db
BIN=.carry BUDGET_S=$((total - 100)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
if [ $rc = 0 ]; then
  for part in fp8; do
    left=$((total - (SECONDS - t0)))
    need=$([ $part = moe ] && echo 70 || echo 95)
    if [ $left -lt $need ]; then echo "bench $part skipped: $left s left"; continue; fi
    timeout $((left - 5)) env BIN=.carry OUT=$OUT/b TABLES=build/glm5 PARTS=$part bash scripts/bench_fp8_moe.sh > "$OUT/bench_$part.out" 2>&1
    echo "bench $part rc=$? $((SECONDS - t0)) s"
  done
fi
echo "total $((SECONDS - t0)) s"
