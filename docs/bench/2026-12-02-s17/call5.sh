#!/usr/bin/env bash
# Session 17, call 5: the profile tune resumed on the candidate's binaries (.carry_nc), then, if it finished, the MoE
# half of issue 6's benchmark on its tables in the same call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-440}
t0=$SECONDS
BIN=.carry_nc BUDGET_S=$(( total - 70 )) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune rc=$? $((SECONDS - t0)) s"
grep -E "rc=|skewed|key done|^\[14" "$OUT/glm5.tune.log" | cut -c1-150 | tail -12
if grep -q "^rc=0" "$OUT/glm5.tune.log"; then
  TABLES=build/glm5 OUT=$OUT/b PARTS=moe timeout $(( total - (SECONDS - t0) - 5 )) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench moe rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$OUT/bench.out" | tail -n 24
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
echo "total $((SECONDS - t0)) s"
