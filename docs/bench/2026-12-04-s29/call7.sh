#!/usr/bin/env bash
# Session 29, call 7: ncu detail (speed of light, memory, warp states, scheduler) for the next session's work, on
# HEAD's binaries: the dense FP8 GEMM at 336 x 3072 x 6144 (the worst M <= 336 ratio, 1.24x) for tunetab's row config
# and 304's, and cuBLASLt's kernel there; the MoE wgmma2 stages at M=336 (m96w96 and the exported m64w64_s4).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
keys="Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Executed Ipc Active|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Warp Cycles Per Issued|Registers Per|Grid Size|Block Size|Mem Busy|Max Bandwidth|L2 Hit Rate|L1/TEX Hit"
for cfg in m128n96k128_w64x96_s4_tma2_sk1 m64n128k128_w64x64_s4_tma2_sk1; do
  TUNETAB_TIME_FP8="336,3072,6144:$cfg" timeout 90 ncu --clock-control none --cache-control none $S -k regex:gemm_fp8 --launch-skip 20 --launch-count 1 \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/ncu_fp8_$cfg.txt" 2>&1
  echo "== tunetab $cfg rc=$? $((SECONDS - t0)) s"; grep -E "  ($keys)" "$OUT/ncu_fp8_$cfg.txt" | sed 's/  */ /g' | head -24
done
timeout 120 ncu --profile-from-start off --clock-control none --cache-control none $S --launch-skip 1 --launch-count 1 \
  python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "336,3072,6144" > "$OUT/ncu_cublas.txt" 2>&1
echo "== cuBLASLt rc=$? $((SECONDS - t0)) s"; grep -E "nvjet|  ($keys)" "$OUT/ncu_cublas.txt" | sed 's/  */ /g' | head -26
for mc in 336:fp8_m96w96_n128x128_k128_s4_wgmma2_sk1 336:fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; do
  for skip in 2 3; do  # stage 1, stage 2 of the second pipeline launch
    f="$OUT/ncu_moe_${mc#*:}_$skip.txt"
    TUNETAB_TIME_MOE="$mc" timeout 90 ncu --clock-control none --cache-control none $S -k regex:moe_stage --launch-skip $skip --launch-count 1 \
      .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$f" 2>&1
    echo "== MoE $mc stage $((skip - 1)) rc=$? $((SECONDS - t0)) s"; grep -E "  ($keys)" "$f" | sed 's/  */ /g' | head -24
  done
done
tar czf "$OUT/ncu.tgz" -C "$OUT" $(cd "$OUT" && ls ncu_*.txt) && (cd "$OUT" && rm -f ncu_*.txt)
echo "total $((SECONDS - t0)) s"
