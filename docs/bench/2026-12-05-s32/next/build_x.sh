#!/usr/bin/env bash
# Builds .carry_x (git-ignored; tunetab_gpu_tests only, 5.7 MB): main's HEAD with ablate.patch applied, built
# incrementally in build/static; the patch is taken back out on exit (rebuild build/static afterwards for main).
# About 3 minutes on 2 cores. Needs a clean tree.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "build_x.sh patches the tree: commit or stash first" >&2; exit 1; }
patch=docs/bench/2026-12-05-s32/next/ablate.patch
git apply "$patch"
trap 'git apply -R "$patch"' EXIT
cmake --build build/static -j2 --target tunetab_gpu_tests > /tmp/build_x.log 2>&1 || { echo "build failed: /tmp/build_x.log" >&2; exit 1; }
mkdir -p .carry_x && cp build/static/tests/tunetab_gpu_tests .carry_x/
echo ".carry_x <- $(git log --oneline -1 | cut -c1-80) + ablate.patch"
