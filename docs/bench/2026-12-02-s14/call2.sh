#!/usr/bin/env bash
# Session 14, call 2 (binaries of the working tree with templates/moe_wide.h): the 96-token wgmma stages
# (tt::moe_stage_wgmma_wide) validated and timed by the MoE timing tool against the exported 32-token config at the
# M where the roofline floor is missed and around it; then Nsight Compute's SpeedOfLight of every pipeline kernel of
# the best new config at M=336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c2; mkdir -p "$o"
base=fp8_m32w32_n256x128_k128_s3_wgmma_sk1
new="fp8_m96w96_n128x128_k128_s3_wgmma_sk1,fp8_m96w96_n128x128_k128_s4_wgmma_sk1,fp8_m96w96_n128x64_k128_s3_wgmma_sk1,fp8_m96w96_n128x64_k128_s4_wgmma_sk1"
spec=""
for m in 128 256 256,skewed 304 336 336,skewed 512 1024; do spec+="$m:$base,$new;"; done
TUNETAB_TIME_MOE="${spec%;}" timeout 300 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/moe_time.log" 2>&1
echo "timing rc=$? $((SECONDS - t0)) s"
grep -E "^TIME|FAIL|rror" "$o/moe_time.log" | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//' | \
  awk '{print $2, $3, $4, $5, $NF}'
best=${BEST:-fp8_m96w96_n128x128_k128_s4_wgmma_sk1}
TUNETAB_TIME_MOE="336:$best" timeout 120 ncu --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight --section Occupancy \
  --section WarpStateStats --section SourceCounters -o "$o/rep_wide" .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/prof_wide.log" 2>&1
echo "ncu rc=$? $((SECONDS - t0)) s"
ncu --import "$o/rep_wide.ncu-rep" --print-details all > "$o/details_wide.txt" 2>&1
ncu --import "$o/rep_wide.ncu-rep" --page source --csv --print-source sass > "$o/src_wide.csv" 2>&1
grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occ|Issued Warp" "$o/details_wide.txt" | sed 's/(MoeStageTmaArgs).*//'
tar czf "$OUT/c2.tgz" -C "$OUT" c2 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
