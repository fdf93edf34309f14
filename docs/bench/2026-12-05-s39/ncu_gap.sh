#!/usr/bin/env bash
# Session 39: Nsight Compute on cuBLASLt's blockwise kernel and tunetab's tma2 / tma3
# tiles at the two dense shapes over cuBLASLt in session 39's H200 benchmark (the rows' tma3 m64n192 first): is the K loop bound by L2 -> SM
# traffic (what cuBLASLt's clusters with TMA multicast save), by the tensor pipe, or by stalls?
#   usage: OUT=... bash docs/bench/2026-12-05-s39/ncu_gap.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
sec=(--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
     --section WarpStateStats --section SchedulerStats --section LaunchStats)
: > "$OUT/ncu.txt"
for spec in 336,3072,6144:m64n192k128_w64x96_s4_tma3_sk1 336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1 \
            336,3072,6144:m128n96k128_w64x96_s6_tma3_sk1 336,3072,6144:m128n128k128_w64x128_s6_tma3_sk1 \
            304,4096,2048:m64n192k128_w64x96_s4_tma3_sk1 304,4096,2048:m64n64k128_w64x64_s4_tma2_sk1; do
  echo "=== $spec" >> "$OUT/ncu.txt"
  TUNETAB_TIME_FP8="$spec" timeout 60 ncu "${sec[@]}" -k regex:gemm_fp8_blockscale -s 3 -c 1 \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' >> "$OUT/ncu.txt" 2>&1
  echo "ncu $spec rc=$? $((SECONDS - t0)) s"
done
echo "=== cuBLASLt 336,3072,6144;304,4096,2048" >> "$OUT/ncu.txt"
timeout 90 ncu "${sec[@]}" --profile-from-start off -c 6 \
  python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "336,3072,6144;304,4096,2048" >> "$OUT/ncu.txt" 2>&1
echo "ncu cuBLASLt rc=$? $((SECONDS - t0)) s"
grep -E "^=== |^  [a-zA-Z_]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Executed Ipc Active|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Grid Size|Block Size|Shared Memory Configuration Size|Cluster" "$OUT/ncu.txt" | head -220
