#!/usr/bin/env bash
# Session 38, H100: GemmFp8Gpu.* on the final binaries (tma3 in its config lists), then Nsight Compute on cuBLASLt's
# kernel and tunetab's tma2 / tma3 at two of the dense shapes over cuBLASLt: is the K loop bound by L2 -> SM traffic
# (what cuBLASLt's clusters with TMA multicast save) or by the tensor pipe?
#   usage: OUT=... bash docs/bench/2026-12-05-s38/ncu_l2.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
t0=$SECONDS
timeout 200 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*:-GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_gpu.log" 2>&1
echo "GemmFp8Gpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/fp8_gpu.log" | head -8
sec=(--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis)
: > "$OUT/ncu.txt"
for spec in 336,3072,6144:m128n128k128_w64x128_s4_tma2_sk1 336,3072,6144:m128n128k128_w64x128_s4_tma3_sk1 \
            336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1 336,3072,6144:m64n192k128_w64x96_s4_tma3_sk1 \
            256,6144,1536:m128n96k128_w64x96_s4_tma2_sk1 256,6144,1536:m128n96k128_w64x96_s4_tma3_sk1; do
  echo "=== $spec" >> "$OUT/ncu.txt"
  TUNETAB_TIME_FP8="$spec" timeout 60 ncu "${sec[@]}" -k regex:gemm_fp8_blockscale -s 3 -c 1 \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' >> "$OUT/ncu.txt" 2>&1
  echo "ncu $spec rc=$? $((SECONDS - t0)) s"
done
echo "=== cuBLASLt 336,3072,6144;256,6144,1536" >> "$OUT/ncu.txt"
timeout 90 ncu "${sec[@]}" --profile-from-start off -s 2 -c 4 \
  python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "336,3072,6144;256,6144,1536" >> "$OUT/ncu.txt" 2>&1
echo "ncu cuBLASLt rc=$? $((SECONDS - t0)) s"
grep -E "^=== |^  [a-zA-Z_]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|Executed Ipc Active|SM Busy|Issue Slots Busy" "$OUT/ncu.txt" | head -150
