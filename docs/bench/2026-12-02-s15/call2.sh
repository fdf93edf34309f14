#!/usr/bin/env bash
# Session 15, calls 2 and after (binaries of the working tree, tma2 at 4 stages only): the profile tune resumed (the
# tma2 configs are new to the 9 FP8 keys; the MoE key's skewed-routing checks are stored as they pass), and, when it
# finishes with time left, issue 6's benchmark on its tables, both families against their baselines in this call.
#   usage (on the device): bash docs/bench/2026-12-02-s15/call2.sh [TOTAL_S] [NAME]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
name=${2:-c2}
t0=$SECONDS
o=$OUT/$name; mkdir -p "$o"
left=$(( total - (SECONDS - t0) - 20 ))
BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
rc=$?; echo "tune rc=$rc $((SECONDS - t0)) s"
grep -E "rc=|skewed|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-150 | tail -40
grep -E "^  M=" "$OUT/glm5.tune.log" | grep -c tma2 | sed 's/^/rows on tma2: /'
if [ $rc = 0 ] && [ $(( total - (SECONDS - t0) )) -gt 170 ]; then
  TABLES=build/glm5 OUT=$o/b timeout $(( total - (SECONDS - t0) - 10 )) bash scripts/bench_fp8_moe.sh > "$o/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; tail -n 80 "$o/bench.out"
fi
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
