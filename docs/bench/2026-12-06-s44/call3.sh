#!/usr/bin/env bash
# Session 44's acceptance try: on an H200, session 41's call.sh with TIMES=0 (the FP8 re-tune with tma4 and its
# clusters in the space, resumed from runs/glm5.db.gz, then the benchmark on its tables), .carry = session 43's final
# build; on any other GPU it stops at once (the machine is given back).
#   usage: OUT=... bash docs/bench/2026-12-06-s44/call3.sh   (env TOTAL_S=575)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
[[ $gpu == *H200* ]] || { echo "not an H200: stopped"; exit 0; }
OUT=$OUT TIMES=0 TOTAL_S=${TOTAL_S:-575} bash docs/bench/2026-12-06-s41/call.sh
