#!/usr/bin/env bash
# Builds tunetab for one HIP platform: scripts/build.sh [nvidia|amd] [extra cmake args...] -> build/<platform>/
set -euo pipefail
cd "$(dirname "$0")/.."
platform=${1:-nvidia}
shift || true
cmake -S . -B "build/$platform" -DCMAKE_BUILD_TYPE=Release -DTUNETAB_PLATFORM="$platform" "$@" >/dev/null
cmake --build "build/$platform" -j "$(nproc)"
