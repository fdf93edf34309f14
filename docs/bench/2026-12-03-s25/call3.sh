#!/usr/bin/env bash
# Session 25, call 3 (15bb415's binaries): the profile tune resumed from runs/glm5.db.gz (call 2's partial re-judging
# of tma2 with split-K's own finish) until it finishes; then the dense FP8 half of issue 6's benchmark on its tables
# against cuBLASLt in the same call; then gpu_check's end-to-end tune and safety tests, each only if the step before
# it passed and the call has time left (END_S).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-300} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
if [ $rc -eq 0 ] && [ $((end - (SECONDS - t0))) -ge 100 ]; then
  BIN=.carry TABLES=build/glm5 OUT=$OUT/b PARTS=fp8 timeout $((end - (SECONDS - t0))) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; grep -iE "ceilings" "$OUT/bench.out"
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
left=$((end - (SECONDS - t0)))
if [ $rc -eq 0 ] && [ $left -ge 180 ]; then
  BIN=.carry PARTS="e2e safety" timeout $left bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
  echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/gpu_check.out"
  rm -f "$OUT"/gpu_check/*.db
else
  echo "gpu_check skipped: $left s left"
fi
echo "total $((SECONDS - t0)) s"
