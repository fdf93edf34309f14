#!/usr/bin/env bash
# Session 22 (never ran: call1_2.sh ran it only if the candidate won, and it lost): the profile tune on .carry (every wgmma2 MoE verdict re-keyed by the template's change; the rest
# resumed from runs/glm5.db.gz, or RESUME=1 from the last call's), then the MoE half of issue 6's benchmark on its tables, in the same call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
[ "${RESUME:-0}" = 1 ] || rm -f build/glm5.db  # RESUME=1: a warm machine's build/glm5.db from the last call
BIN=.carry BUDGET_S=${TUNE_S:-470} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 6 | cut -c1-200
left=$(( ${END_S:-585} - (SECONDS - t0) ))  # END_S: this script's share of the call
if [ $rc -eq 0 ] && [ $left -ge 70 ]; then
  BIN=.carry TABLES=build/glm5 OUT=$OUT/b PARTS=moe timeout $left bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$OUT/bench.out" | tail -n 26
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
echo "total $((SECONDS - t0)) s"
