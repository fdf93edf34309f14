#!/usr/bin/env bash
# Session 24, call 3: the profile tune resumed from runs/glm5.db.gz on d56240a's binaries (the tiered search ranks
# an anchor's results by median: rows between anchors try configs that stale finals had crowded out), then, if it
# finished, the dense FP8 half of issue 6's benchmark on its tables against cuBLASLt in the same call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-300} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "^rc=" "$OUT/glm5.tune.log" | tail -n 1
grep -E "^  M=(256|512|1024|2048) " "$OUT/glm5.tune.log" | cut -c1-110
if [ $rc -eq 0 ] && [ $((end - (SECONDS - t0))) -ge 90 ]; then
  BIN=.carry TABLES=build/glm5 OUT=$OUT/b PARTS=fp8 timeout $((end - (SECONDS - t0))) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$OUT/bench.out" | grep -E "^\| (256|304|336|512|1024|2048|4096) "
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
echo "total $((SECONDS - t0)) s"
