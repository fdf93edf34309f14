#!/usr/bin/env bash
# Session 14, call 3 (binaries of the working tree): moe_stage_wgmma_wide with the producer's gather fixed per thread
# (MoeTokenGather) instead of recomputed every K block (call 2's source counters: the producer bound the 96-token
# stages). The MoE timing tool validates and times: (a) the 96-token configs against the exported 32-token config
# (old kernel); (b) with TUNETAB_MOE_WIDE_ALL=1 (an uncommitted switch of this experiment) the 32- and 64-token
# configs on the new kernel. Then ncu SpeedOfLight of the 96-token stages at M=336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c3; mkdir -p "$o"
show() { grep -E "^TIME|FAIL|rror" "$1" | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//' | awk '{print $2, $3, $4}'; }
ms="128 256 256,skewed 304 336 336,skewed 512 1024 4096"
a="fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m96w96_n128x128_k128_s3_wgmma_sk1,fp8_m96w96_n128x128_k128_s4_wgmma_sk1,fp8_m96w96_n128x64_k128_s3_wgmma_sk1"
spec=""; for m in $ms; do spec+="$m:$a;"; done
TUNETAB_TIME_MOE="${spec%;}" timeout 200 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time_a.log" 2>&1
echo "== (a) rc=$? $((SECONDS - t0)) s"; show "$o/time_a.log"
b="fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m32w32_n128x128_k128_s3_wgmma_sk1,fp8_m64w64_n128x128_k128_s3_wgmma_sk1,fp8_m64w64_n128x256_k128_s3_wgmma_sk1"
spec=""; for m in $ms; do spec+="$m:$b;"; done
TUNETAB_MOE_WIDE_ALL=1 TUNETAB_TIME_MOE="${spec%;}" timeout 200 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time_b.log" 2>&1
echo "== (b) new kernel at 32/64 tokens rc=$? $((SECONDS - t0)) s"; show "$o/time_b.log"
TUNETAB_TIME_MOE="336:fp8_m96w96_n128x128_k128_s4_wgmma_sk1" timeout 90 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight \
  .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/sol_wide.txt" 2>&1
echo "== ncu rc=$? $((SECONDS - t0)) s"
grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput" "$o/sol_wide.txt" | sed 's/(Moe[A-Za-z]*Args).*//'
tar czf "$OUT/c3.tgz" -C "$OUT" c3 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
