#!/usr/bin/env bash
# Builds what call1.sh compares into git-ignored folders, tunetab_gpu_tests only (5.7 MB each; the carry limit is
# 64 MiB): .carry_h = main's MoE kernels (4f5df34), and the branch s31-moe-small (five commits on 4f5df34):
# .carry_k = its first (the small kernels), .carry_t = its second (+ the split last round), .carry_p = its tip (+
# programmatic dependent launches, + the review's fixes: tests, and the stages' set-up before the grid wait; + session
# 32's fifth commit, the sorted quantization's grid at one wave of resident blocks).
# Without the branch it is re-created from s31-moe-small.mbox (git am on 4f5df34; five commits since session 32).
# Incremental builds in build/static (each checkout re-embeds the templates): about 6 minutes in all on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "build.sh checks out commits: commit or stash first" >&2; exit 1; }
start=$(git rev-parse --abbrev-ref HEAD)
mbox=$PWD/docs/bench/2026-12-04-s31/next/s31-moe-small.mbox
if ! git rev-parse -q --verify refs/heads/s31-moe-small >/dev/null; then
  git checkout -q -b s31-moe-small 4f5df34 && git am -q "$mbox" && git checkout -q "$start"
fi
revs=$(git rev-list --reverse 4f5df34..s31-moe-small)
set -- $revs
[ $# -ge 4 ] || { echo "expected four or more commits on s31-moe-small, found $#" >&2; exit 1; }
set -- "$1" "$2" "${!#}"
trap 'git checkout -q "$start"' EXIT
for pair in "4f5df34 h" "$1 k" "$2 t" "$3 p"; do
  set -- $pair
  git checkout -q "$1"
  cmake --build build/static -j2 > /tmp/build_$2.log 2>&1 || { echo "build of $1 failed: /tmp/build_$2.log" >&2; exit 1; }
  mkdir -p ".carry_$2" && cp build/static/tests/tunetab_gpu_tests ".carry_$2/"
  echo ".carry_$2 <- $(git log --oneline -1 | cut -c1-100)"
done
