#!/usr/bin/env bash
# One device call for the next session, whichever GPU the device tool lends (carry .carry, rebuilt from main).
# On the H200 (the GPU whose rows runs/glm5.db.gz holds): the profile tune, resumed. STAGE=moe tunes the fused-MoE key
# only (its 13 rows are stale: do it first); STAGE=all runs docs/bench/2026-12-05-s32/next/call2.sh (the whole
# profile, then the benchmarks once the tune's rc is 0). Copy the returned glm5.db.gz over runs/glm5.db.gz and commit.
# On any other GPU a tune would start every row again (tune_profile.sh refuses it), so the call runs one part of
# scripts/gpu_check.sh instead (CHECK=1 or 2: its two halves), which holds on any sm_90a GPU.
#   usage: OUT=... STAGE=moe|all CHECK=1|2 bash docs/bench/2026-12-05-s35/next_call.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${TOTAL_S:-570}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  if [ "${STAGE:-moe}" = moe ]; then
    BIN=.carry BUDGET_S=$((total - 15)) TUNE_ARGS="--families fused_moe" \
      bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
    echo "tune rc=$?"; grep -E "key done|gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 6 | cut -c1-200
  else
    BIN=.carry TOTAL_S=$total bash docs/bench/2026-12-05-s32/next/call2.sh
  fi
else
  if [ "${CHECK:-1}" = 1 ]; then
    parts="unit gpu" tests='GemmFp8Gpu.*:MoeGpu.*:MoeGpuConfigs.*'
  else
    parts="gpu e2e safety" tests='GemmGpu.*:ValidateGpu.*'
  fi
  BIN=.carry PARTS=$parts GPU_TESTS=$tests STEP_TIMEOUT=$((total - 20)) timeout "$total" bash scripts/gpu_check.sh 2>&1 | tail -n 30
fi
