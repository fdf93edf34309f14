#!/usr/bin/env bash
# Session 39's device call. On an H200: session 38's call (the FP8 re-tune resumed from runs/glm5.db.gz, then the
# benchmark on its tables when the tune ends with rc 0). On any other GPU (the H200 database cannot be resumed there):
# a part of scripts/gpu_check.sh on main's binaries, H100_PARTS / H100_TESTS picking it (the header of gpu_check.sh
# names the two calls that cover everything).
#   usage: OUT=... bash docs/bench/2026-12-05-s39/call.sh   (env TOTAL_S=575, TUNE_ARGS, H100_PARTS, H100_TESTS;
#   H100_MODE=ncu runs ncu_gap.sh instead)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then
  exec bash docs/bench/2026-12-05-s38/call.sh
fi
if [ "${H100_MODE:-}" = ncu ]; then
  echo "GPU: $gpu (not an H200): ncu_gap.sh instead"; exec bash docs/bench/2026-12-05-s39/ncu_gap.sh
fi
echo "GPU: $gpu (not an H200): gpu_check part '${H100_PARTS:-unit gpu}' instead"
env BIN=.carry OUT="$OUT" STEP_TIMEOUT=${STEP_TIMEOUT:-560} PARTS="${H100_PARTS:-unit gpu}" \
  GPU_TESTS="${H100_TESTS:-GemmFp8Gpu.*:MoeGpu.*:MoeGpuConfigs.*}" bash scripts/gpu_check.sh 2>&1 | tail -n 40
