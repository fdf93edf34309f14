#!/usr/bin/env bash
# Session 50's device calls, on main with tma4's 64-row A boxes (`.carry` = main's static build).
# - on an H200: docs/bench/2026-12-06-s46/next.sh (issue 6's acceptance: the FP8 keys re-tuned from runs/glm5.db.gz,
#   tma4's results re-judged on its new code, then the benchmark in the same call; call again while the log ends
#   rc=124).
# - on any other GPU (an H100): first (unless CHECK=0) gpu_check's unit part and GemmFp8Gpu.* on the tma4 configs, then
#   the H100 database's FP8 keys re-tuned the same way (runs/glm5-h100.db.gz) and, once the tune ends rc 0, the
#   benchmark on its tables.
# Outputs: gpu_check.tgz; <name>.tune.log, <name>.db.gz (copy it over runs/<name>.db.gz and commit), <name>.tables.tgz,
# bench.tgz.   usage: OUT=... [TOTAL_S=585] [CHECK=0] bash docs/bench/2026-12-07-s50/call.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-585}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] && exec env TOTAL_S=$total bash docs/bench/2026-12-06-s46/next.sh
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [ "${CHECK:-1}" != 0 ]; then
  TUNETAB_FP8_ONLY=tma4 PARTS="unit gpu" GPU_TESTS='GemmFp8Gpu.*' STEP_TIMEOUT=200 bash scripts/gpu_check.sh
  rm -rf "${OUT:-out}/gpu_check"; echo "gpu_check at $((SECONDS - t0)) s"
fi
TOTAL_S=$((total - (SECONDS - t0))) TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" \
  bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5-h100
echo "total $((SECONDS - t0)) s"
