#!/usr/bin/env bash
# The main job (README): installs what is missing, builds, and tunes the built-in shape list into
# tunetab.db, exporting tuned/bf16_tuned_gemm.csv. Without a GPU it says so and compile-checks every
# candidate instead. Extra arguments go to `tunetab tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh nvidia
mkdir -p tuned
exec build/nvidia/tunetab tune --db tunetab.db --export tuned/bf16_tuned_gemm.csv "$@"
