#!/usr/bin/env bash
# For the next session's first device call (`.carry` = a build of `b4d4934` or later: schema 4, the tune's
# "code objects:" line). On an H200: issue 6's acceptance there, the H200 FP8 keys re-tuned from runs/glm5.db.gz (tma4
# and its clusters are new since session 39's H200 tune; its first call migrates the database to schema 4) and, once
# the tune ends with rc 0, the benchmark on its tables in the same call; call again while the tune log ends rc=124
# (about two calls: the H100's FP8 keys took 811 s). On any other GPU it stops: everything this session's note lists as
# left for an H100 is done (docs/performance.md, session 46).
# Outputs: glm5.tune.log, glm5.db.gz (copy it over runs/glm5.db.gz and commit), glm5.tables.tgz, bench.tgz.
#   usage: OUT=... bash docs/bench/2026-12-06-s46/next.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
[[ $gpu == *H200* ]] || { echo "not an H200: stopped (give the machine back)"; exit 1; }
TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5
