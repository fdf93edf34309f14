#!/usr/bin/env bash
# The profile tune after call 1 (s31/next/call1.sh) and the ablation: BIN=.carry_m (main with s31-moe-small merged:
# the tune re-judges the MoE key, ~365 s in session 20) or BIN=.carry (main's kernels, the branch not merged: only
# the new dense rows 129..240 are tuned, 91 rows of 13 keys). Either way the profile's new fine rows (gemm-fine-rows
# 129-512) are tuned. A cut tune (rc 124) resumes in the next call from the returned database; once it finishes,
# the benchmarks (MoE ~60 s, FP8 ~150 s; each with its baseline) run in the time left, MoE first.
#   usage: BIN=.carry_m OUT=... bash docs/bench/2026-12-05-s32/next/call2.sh   (carry $BIN; env TOTAL_S=580)
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
total=${TOTAL_S:-580}
bin=${BIN:-.carry}
BIN=$bin BUDGET_S=$((total - 40)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
for part in moe fp8; do
  left=$((total - (SECONDS - t0)))
  need=70; [ $part = fp8 ] && need=170
  if [ $rc = 0 ] && [ $left -ge $need ]; then
    timeout $((left - 5)) env BIN=$bin OUT=$OUT/b TABLES=build/glm5 PARTS=$part bash scripts/bench_fp8_moe.sh > "$OUT/bench_$part.out" 2>&1
    echo "bench $part rc=$? $((SECONDS - t0)) s"
  fi
done
echo "total $((SECONDS - t0)) s"
