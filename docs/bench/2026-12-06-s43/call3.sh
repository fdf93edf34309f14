#!/usr/bin/env bash
# Session 43's third device call. On an H200: call.sh (the acceptance tune and benchmark). On another GPU: Nsight
# Compute on tma4 128 x 128 s6 (cuBLASLt's tiling, 96 CTAs) and cuBLASLt at 304 x 4096 x 512 and x 2048, where call 1
# put tunetab 1.0 and 0.9 us over cuBLASLt: is the gap inside the kernel (duration under ncu), and in which part of it
# (one launch each, ncu's cache flush, --clock-control none; durations are not the benchmark's).
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call3.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then exec bash docs/bench/2026-12-06-s43/call.sh; fi
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
sec=(--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats
     --section SchedulerStats --section LaunchStats
     --metrics sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max,smsp__cycles_active.avg,dram__bytes_read.sum,lts__t_bytes.sum)
: > "$OUT/ncu.txt"
for spec in 304,4096,512:m128n128k128_w64x128_s6_tma4_sk1 304,4096,2048:m128n128k128_w64x128_s6_tma4_sk1 \
            304,4096,512:m128n96k128_w64x96_s6_tma3_sk1; do
  echo "=== $spec" >> "$OUT/ncu.txt"
  TUNETAB_TIME_FP8="$spec" timeout 60 ncu "${sec[@]}" -k regex:gemm_fp8_blockscale -s 3 -c 1 \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' >> "$OUT/ncu.txt" 2>&1
  echo "ncu $spec rc=$? $((SECONDS - t0)) s"
done
echo "=== cuBLASLt 304,4096,512;304,4096,2048" >> "$OUT/ncu.txt"
timeout 90 ncu "${sec[@]}" --profile-from-start off -c 6 \
  python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "304,4096,512;304,4096,2048" >> "$OUT/ncu.txt" 2>&1
echo "ncu cuBLASLt rc=$? $((SECONDS - t0)) s"
grep -E "^=== |^  [a-zA-Z_]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Grid Size|Cluster Size|sm__cycles_active|gpc__cycles|dram__bytes|lts__t_bytes|Elapsed Cycles" "$OUT/ncu.txt" | head -150
echo "total $((SECONDS - t0)) s"
