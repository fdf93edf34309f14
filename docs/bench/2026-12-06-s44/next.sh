#!/usr/bin/env bash
# For the next session's device calls: issue 6's acceptance on the GPU that comes, by scripts/tune_and_bench.sh. On an
# H200: the H200 re-tune of the FP8 keys (tma4 and its clusters new to runs/glm5.db.gz) and the benchmark, as
# call3.sh. On an H100: the H100 tune resumed from runs/glm5-h100.db.gz (its nine FP8 keys are done: session 44's
# calls 4-5) with every family (the bf16 keys, then the fused MoE), and the benchmark once it ends with rc 0.
# Outputs: glm5*.tune.log, glm5*.db.gz, glm5*.tables.tgz, bench.tgz.
#   usage: OUT=... bash docs/bench/2026-12-06-s44/next.sh   (env TOTAL_S=575)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [[ $gpu == *H200* ]]; then
  TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5
elif [[ $gpu == *H100* ]]; then
  bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5-h100
else
  echo "neither an H200 nor an H100: stopped"
fi
