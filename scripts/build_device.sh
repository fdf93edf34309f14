#!/usr/bin/env bash
# Builds self-contained binaries for the GPU machine (its image has no Boost, SQLite or Eigen development
# files): Boost, SQLite and the C++ runtime linked statically, into .carry/ (git-ignored), which the
# device tool carries. Then, on the device: bash scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/static -DCMAKE_BUILD_TYPE=Release -DTUNETAB_PLATFORM=nvidia -DTUNETAB_STATIC=ON >/dev/null
cmake --build build/static -j "$(nproc)"
mkdir -p .carry
cp build/static/tunetab build/static/tests/tunetab_gpu_tests build/static/tests/tunetab_safety_gpu_tests \
  build/static/tests/tunetab_unit_tests .carry/
ls -la .carry
