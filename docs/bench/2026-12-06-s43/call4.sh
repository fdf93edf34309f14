#!/usr/bin/env bash
# Session 43's fourth device call. On an H200: call.sh (the acceptance tune and benchmark). On another GPU:
# pdl_probe.py at 304 x 4096 x 2048 and x 512 (does cuBLASLt overlap the kernel before it?).
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call4.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then exec bash docs/bench/2026-12-06-s43/call.sh; fi
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
which nsys ncu cuobjdump 2>&1 | head -3
for shape in 304,4096,2048 304,4096,512; do
  echo "== $shape"; timeout 120 python3 docs/bench/2026-12-06-s43/pdl_probe.py $shape 2>&1 | grep -v Warning
done | tee "$OUT/pdl_probe.txt"
