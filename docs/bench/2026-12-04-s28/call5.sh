#!/usr/bin/env bash
# Session 28, call 5 (binaries of HEAD + the runner's demote_other_finals): gpu_check's e2e part (tune, resume,
# export, verify), then the profile tune resumed from runs/glm5.db.gz for what is left of the call: each row's finals
# timed over another sample of Ms go back to screening and the fastest few are re-timed over the row's current sample.
# The database it leaves is evidence only (the shipped tables are call 3's); a later session resumes it in full.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
BIN=.carry PARTS="e2e" bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
echo "gpu_check rc=$? $((SECONDS - t0)) s"; grep -A12 "gpu_check summary" "$OUT/gpu_check.out"
rm -rf "$OUT/gpu_check"
rm -f build/glm5.db
left=$(( ${TOTAL_S:-430} - (SECONDS - t0) ))
BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune rc=$? $((SECONDS - t0)) s"
grep -E "back to screening" "$OUT/glm5.tune.log" | wc -l
grep -E "^\[|back to screening" "$OUT/glm5.tune.log" | cut -c1-230 | head -60
tail -n 3 "$OUT/glm5.tune.log" | cut -c1-200
echo "total $((SECONDS - t0)) s"
