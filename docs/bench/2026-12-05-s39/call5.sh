#!/usr/bin/env bash
# Session 39, call 5: ncu_source.sh (any GPU), then on an H200 the benchmark again on runs/glm5 (call4.sh NCU=0).
#   usage: OUT=... bash docs/bench/2026-12-05-s39/call5.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT/src"
OUT="$OUT/src" timeout 240 bash docs/bench/2026-12-05-s39/ncu_source.sh 2>&1 | tail -n 80
tar czf "$OUT/src.tgz" -C "$OUT" src && rm -rf "$OUT/src"
NCU=0 bash docs/bench/2026-12-05-s39/call4.sh
