#!/usr/bin/env bash
# Nsight Compute on one tuned GEMM kernel, on the device machine (binaries from scripts/build_device.sh):
#   scripts/profile_gemm.sh M,N,K KERNEL_REGEX [extra ncu args...]
# KERNEL_REGEX matches the mangled name, e.g. 'gemm_bf16_tnILi128ELi256ELi64ELi64ELi256ELi4ELi2E'. The
# kernel's first launch (its validation launch, cold caches) is profiled; the report goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.carry}
out=${OUT:-out}
mkdir -p "$out"
shape=$1
regex=$2
shift 2
ncu --clock-control none --kernel-name-base mangled -k "regex:$regex" -c 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
  --section WarpStateStats --section SchedulerStats "$@" \
  "$bin/tunetab" tune --db "$out/profile.db" --shapes "$shape" --top 1 --no-progress
