#!/usr/bin/env bash
# Session 44's tune on the H100 (no H200 in sessions 40-44): the H200 profile (calls 4-5 ran a copy of it, since removed)
# into its own database, runs/glm5-h100.db.gz, resumable across calls as scripts/tune_profile.sh's; the families in
# turn (TUNE_ARGS, default: the FP8 keys with M 257-352 swept, as the H200 tune's session 39). On an H200 it runs the
# H200 acceptance call (call3.sh) instead. Outputs: glm5-h100.tune.log, glm5-h100.db.gz, glm5-h100.tables.tgz.
#   usage: OUT=... bash docs/bench/2026-12-06-s44/call4.sh   (env BUDGET_S=560, TUNE_ARGS)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
[[ $gpu == *H200* ]] && exec bash docs/bench/2026-12-06-s44/call3.sh
[[ $gpu == *H100* ]] || { echo "neither an H200 nor an H100: stopped"; exit 0; }
env BIN=.carry OUT="$OUT" BUDGET_S=${BUDGET_S:-560} TUNE_ARGS="${TUNE_ARGS:---families gemm_fp8_blockscale --sweep-rows 257-352}" \
  bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5-h100 > "$OUT/tune.tail" 2>&1
echo "tune rc=$?"; grep -E "^\[|key done|^rc=|gaps" "$OUT/glm5-h100.tune.log" | cut -c1-160
