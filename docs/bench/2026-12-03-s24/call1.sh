#!/usr/bin/env bash
# Session 24, call 1: tma2 with two 96-column consumers merged (every tma2 code key changed). GemmFp8Gpu (the
# ragged-shape test has three w96 configs, both index widths), then, if it passed, the profile tune resumed from
# runs/glm5.db.gz (the 9 FP8 keys re-judge every tma2 config), bounded by END_S.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
.carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*:-GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_tests.log" 2>&1
trc=$?
echo "GemmFp8Gpu rc=$trc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/fp8_tests.log" | head -n 20
left=$(( ${END_S:-585} - (SECONDS - t0) ))
if [ $trc -eq 0 ] && [ $left -ge 120 ]; then
  rm -f build/glm5.db
  BIN=.carry BUDGET_S=$((left - 15)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; tail -n 8 "$OUT/tune_tail.txt" | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
