#!/usr/bin/env bash
# Session 27, call 2: the profile tune with gemm-fine-rows = 257-512 (a dense row per 32 tokens there, AITER's fine
# padding), resumed from runs/glm5.db.gz (no kernel changed: the stored verdicts stand; the 84 new rows are tuned and
# the 512 row re-judged on the Ms it now serves, 481..512). Then, if the tune finished, the FP8 benchmark on its tables.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-470} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
trc=$?
echo "tune rc=$trc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
if [ $trc -eq 0 ] && [ $((end - (SECONDS - t0))) -ge 95 ]; then
  BIN=.carry OUT=$OUT/b TABLES=build/glm5 PARTS=fp8 bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"
  (cd "$OUT" && tar czf bench.tgz b && rm -rf b)
fi
echo "total $((SECONDS - t0)) s"
