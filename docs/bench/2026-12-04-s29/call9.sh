#!/usr/bin/env bash
# Session 29, call 9: the fused MoE's rows timed over nine Ms of their bucket (FamilyOps::timing_points; call 8 showed
# the 257..512 row's time stepping inside it). Resumes the profile tune from call 6's database: the MoE finals, timed
# over three Ms, go back to screening and the fastest four of each row are re-timed over nine. Bounded (the session's
# device time is nearly spent; resumable), then the MoE benchmark if the tune finished and time is left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-285}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-215} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=|key done" "$OUT/glm5.tune.log" | tail -n 8 | cut -c1-200
left=$((total - (SECONDS - t0)))
if [ $rc = 0 ] && [ $left -ge 60 ]; then
  timeout $((left - 5)) env BIN=.carry OUT=$OUT/b TABLES=build/glm5 PARTS=moe bash scripts/bench_fp8_moe.sh > "$OUT/bench_moe.out" 2>&1
  echo "bench moe rc=$? $((SECONDS - t0)) s"
fi
rm -rf "$OUT/b"
echo "total $((SECONDS - t0)) s"
