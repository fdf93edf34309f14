#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, builds both HIP platforms and runs every
# test that needs no GPU: unit tests, CLI error checks, and the jit tests that compile the whole config
# space for sm_90a (NVRTC), gfx90a (ROCm hipRTC) and gfx942/gfx950 (clang). GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh nvidia
bash scripts/build.sh amd
ctest --test-dir build/amd --output-on-failure -L 'unit|jit' -E 'clang'
ctest --test-dir build/nvidia --output-on-failure
