#!/usr/bin/env bash
# Session 26, call 2 (call 1 was taken back after 485 s of device time with nothing returned; the next start was
# refused): b1a7548's binaries. The profile tune resumed from runs/glm5.db.gz for the whole call: every tma2 verdict
# is re-keyed (kSplitK) and the 11 tma2_p132 configs are new. The tuner validates every candidate on every served M
# before timing it, so a wrong kSplitK or tma2_p132 instance is rejected there; the ragged-shape test follows in the
# next call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-560} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
echo "total $((SECONDS - t0)) s"
