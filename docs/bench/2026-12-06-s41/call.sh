#!/usr/bin/env bash
# Session 41's H200 call: session 40's call4.sh (tma3 against tma4 and cuBLASLt, then the FP8 re-tune with tma4 in the
# space, resumed from runs/glm5.db.gz, and the benchmark on its tables); TIMES=0 leaves out the timings (session 38's
# call.sh alone). On any other GPU it stops at once: the H100 timings and gpu_check ran in calls 1-4.
#   usage: OUT=... bash docs/bench/2026-12-06-s41/call.sh   (env TOTAL_S=560, TIMES=1)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] || { echo "GPU: $gpu (not an H200): stopped"; exit 3; }
[ "${TIMES:-1}" = 0 ] && exec bash docs/bench/2026-12-05-s38/call.sh
exec bash docs/bench/2026-12-05-s40/call4.sh
