#!/usr/bin/env bash
# For the call after call1.sh, only if the branch s31-moe-small wins there and is merged into main: the profile tune
# on main's binaries (.carry, all four, from `cmake --build build/static` + cp; see the summary in performance.md,
# session 31), from runs/glm5.db.gz. The branch edits every MoE template the wgmma2 pipeline includes, so the tune
# re-judges the MoE key (session 20: 365 s); a call that runs out resumes in the next (rc 124). Then the MoE benchmark
# (tunetab's rows and the bf16 grouped_mm baseline in the same call) if the tune finished with time left.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
total=${TOTAL_S:-580}
rm -f build/glm5.db
BIN=.carry BUDGET_S=$((total - 75)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
left=$((total - (SECONDS - t0)))
if [ $rc = 0 ] && [ $left -ge 65 ]; then
  timeout $((left - 5)) env BIN=.carry OUT=$OUT/b TABLES=build/glm5 PARTS=moe bash scripts/bench_fp8_moe.sh > "$OUT/bench_moe.out" 2>&1
  echo "bench moe rc=$? $((SECONDS - t0)) s"
fi
echo "total $((SECONDS - t0)) s"
