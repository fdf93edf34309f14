#!/usr/bin/env bash
# Nsight Compute on the FP8 GEMM and fused-MoE kernels of the exported tables, on the device machine (binaries
# from scripts/build_device.sh), through the timing tools of tunetab_gpu_tests (the specs are theirs:
# TUNETAB_TIME_FP8="M,N,K:config,..." and TUNETAB_TIME_MOE="M[,skewed]:config,..."). One ncu run per spec profiles
# its first launch (FP8) or its first stage-1 and stage-2 launches (MoE); the timing then runs unprofiled. Text
# reports go to $OUT/ncu_fp8.txt and $OUT/ncu_moe.txt; a digest of them to stdout.
#   usage: [FP8=<spec>] [MOE=<spec>] bash scripts/profile_fp8_moe.sh [extra ncu args...]
# The defaults are rows where the floors are missed (docs/performance.md, session 10): dense FP8 at M=336 and
# M=4096 on a K=2048 key, the MoE at M=256 and M=1024 (stage 1 and stage 2 of each).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.carry}
out=${OUT:-out}
mkdir -p "$out"
fp8=${FP8-336,4096,2048:m64n256k128_w64x128_s4_tma_sk1;4096,4096,2048:m128n192k128_w64x192_s4_tma_sk1}
moe=${MOE-256:fp8_m32w32_n256x256_k128_s3_wgmma_sk1;1024:fp8_m32w32_n256x256_k128_s3_wgmma_sk1}
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats)
# NOTE: the WarpStateStats section prints only its summary on the command line; the stall reasons behind it (cycles
# per issued instruction spent in each: long_scoreboard, barrier, wait, ...) come as raw metrics, and the source
# counters name the SASS instructions the samples stalled at. STALLS=0 leaves both out. (Added in session 13, after
# its profile of the MoE stages could not say where ~1-1.6 us per K block went; not yet run on the device.)
if [ "${STALLS:-1}" != 0 ]; then
  sections+=(--section SourceCounters --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
fi
status=0
# profile FAMILY ENV_VAR TEST_FILTER KERNEL_REGEX KERNELS SPEC: one ncu run per spec, so that each spec's first
# launches (validation: cold caches, ncu flushes them anyway) are the ones profiled, not the previous spec's timing.
profile() {
  local family=$1 var=$2 filter=$3 regex=$4 kernels=$5 specs=$6 one
  : > "$out/ncu_$family.txt"
  IFS=';' read -ra list <<< "$specs"
  for one in "${list[@]}"; do
    echo "=== $one" >> "$out/ncu_$family.txt"
    env "$var=$one" ncu --clock-control none -k "regex:$regex" -c "$kernels" "${sections[@]}" "${extra[@]}" \
      "$bin/tunetab_gpu_tests" --gtest_filter="$filter" >> "$out/ncu_$family.txt" 2>&1 || status=1
  done
  grep -E "^=== |^  [a-z_]|Duration|Memory Throughput|DRAM Throughput|L2 Hit Rate|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|issue_stalled_|^TIME" \
    "$out/ncu_$family.txt" | head -200
}
extra=("$@")
[ -n "$fp8" ] && profile fp8 TUNETAB_TIME_FP8 'GemmFp8Gpu.TimeConfigs*' gemm_fp8_blockscale 1 "$fp8"
[ -n "$moe" ] && profile moe TUNETAB_TIME_MOE 'MoeGpu.TimeConfigs*' 'moe_(stage|fused)' 2 "$moe"
exit $status
