#!/usr/bin/env bash
# Session 43's eighth device call, on the cluster branch's binaries (.carry). On an H200: session 41's call.sh with
# TIMES=0 (the FP8 re-tune, now with tma4 and its clusters in the space, resumed from runs/glm5.db.gz, then the
# benchmark). On another GPU: gpu_check's unit and GPU parts on the FP8 tests (the ragged-shape test with the cluster
# entries among the rest).
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call8.sh   (env TOTAL_S=500)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [[ $gpu == *H200* ]]; then
  OUT=$OUT TIMES=0 TOTAL_S=${TOTAL_S:-500} bash docs/bench/2026-12-06-s41/call.sh
  exit $?
fi
env BIN=.carry OUT="$OUT" PARTS="unit gpu" GPU_TESTS='GemmFp8Gpu.*' bash scripts/gpu_check.sh
