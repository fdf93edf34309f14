#!/usr/bin/env bash
# Session 20, call 4 (NEVER RAN: the device refused, too little device time left to start a machine): why moe_quant_sorted takes 40-50 us for M=336's 25 MB, and
# why a block a row (.carry_t3, 16631fa, reverted) made the pipeline slower: Nsight Compute's detailed set on the
# stage-1 quant kernel at M=336 (m64 row config) for t3, t4 (HEAD's kernels) and t5 (t4 + the hardware conversion).
set -uo pipefail
cd "$(dirname "$0")/../../.."
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
for v in carry_t4 carry_t3 carry_t5; do
  TUNETAB_TIME_MOE="336:$E4" timeout 35 ncu --clock-control none --cache-control none -k regex:moe_quant_sorted --launch-skip 2 \
    --launch-count 1 --set detailed .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu_quant_$v.txt" 2>&1
  echo "== $v rc=$? $SECONDS s"
  grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Stall" "$OUT/ncu_quant_$v.txt" | head -16
done
