#!/usr/bin/env bash
# Session 14, call 1 (binaries of 92b8e54; templates as 940d7b3): where the FP8 wgmma kernels' time goes.
#  1. Every pipeline kernel of the MoE at M=336 (balanced), five wgmma configs: ncu's SpeedOfLight only
#     (duration, DRAM / L2 throughput per kernel), one validation launch each, caches flushed between kernels.
#  2. The stall reasons and the stalled SASS instructions (ncu source page) of the exported MoE config's two stages at
#     M=336, the 64-token m64w64_n128x128_s3's, and the dense FP8 m128n192 at 4096 x 6144 x 2048.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
bin=.carry
o=$OUT/c1; mkdir -p "$o"
for cfg in fp8_m32w32_n256x128_k128_s3_wgmma_sk1 fp8_m64w64_n128x128_k128_s3_wgmma_sk1 fp8_m32w32_n128x128_k128_s3_wgmma_sk1 \
           fp8_m64w32_n256x256_k128_s3_wgmma_sk1 fp8_m64w64_n128x256_k128_s3_wgmma_sk1; do
  TUNETAB_TIME_MOE="336:$cfg" timeout 90 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight \
    "$bin/tunetab_gpu_tests" --gtest_filter='MoeGpu.TimeConfigs*' > "$o/sol_$cfg.txt" 2>&1
  echo "sol $cfg rc=$? $((SECONDS - t0)) s"
  grep -E "^  void|^  moe|Duration|DRAM Throughput|L2 Cache Throughput|^TIME" "$o/sol_$cfg.txt" | sed 's/(MoeStageTmaArgs).*//'
done
stall=(--section WarpStateStats --section SourceCounters --section SpeedOfLight --section Occupancy
       --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
prof() {  # name env-assignment filter kernel-regex count
  local name=$1 envset=$2 filter=$3 regex=$4 count=$5
  env "$envset" timeout 150 ncu --clock-control none -k "regex:$regex" -c "$count" "${stall[@]}" -o "$o/rep_$name" \
    "$bin/tunetab_gpu_tests" --gtest_filter="$filter" > "$o/prof_$name.log" 2>&1
  echo "prof $name rc=$? $((SECONDS - t0)) s"
  ncu --import "$o/rep_$name.ncu-rep" --print-details all > "$o/details_$name.txt" 2>&1
  ncu --import "$o/rep_$name.ncu-rep" --page source --csv --print-source sass > "$o/src_$name.csv" 2>&1
  echo "  src rc=$? $(wc -c < "$o/src_$name.csv") bytes"
  grep -E "^  void|Duration|issue_stalled_.*ratio" "$o/details_$name.txt" | sed 's/(MoeStageTmaArgs).*//' | \
    awk '/ratio/ {if ($NF + 0 >= 0.3) print; next} {print}'
}
prof moe32 TUNETAB_TIME_MOE=336:fp8_m32w32_n256x128_k128_s3_wgmma_sk1 'MoeGpu.TimeConfigs*' moe_stage 2
prof moe64 TUNETAB_TIME_MOE=336:fp8_m64w64_n128x128_k128_s3_wgmma_sk1 'MoeGpu.TimeConfigs*' moe_stage 2
prof dense TUNETAB_TIME_FP8=4096,6144,2048:m128n192k128_w64x192_s4_tma_sk1 'GemmFp8Gpu.TimeConfigs*' gemm_fp8_blockscale 1
echo "total $((SECONDS - t0)) s"
tar czf "$OUT/c1.tgz" -C "$OUT" c1 && rm -rf "$o"
