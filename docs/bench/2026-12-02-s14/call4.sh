#!/usr/bin/env bash
# Session 14, call 4 (binaries of the working tree): call 3's 96-token stages hung: the producer lowered its registers
# to 48 while the consumers asked for 232, more than the CTA's pool held (setmaxnreg.inc waits for them). With the
# producer at 40 (what the pool allows), the 96-token configs validated and timed, against the new kernel at 32 and 64
# tokens (TUNETAB_MOE_WIDE_ALL=1, this experiment's uncommitted switch) and the old one, each command under a bound.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c4; mkdir -p "$o"
show() { grep -E "^TIME|FAIL|rror" "$1" | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//' | awk '{print $2, $3, $4}'; }
TUNETAB_TIME_MOE="336:fp8_m96w96_n128x128_k128_s4_wgmma_sk1" timeout 40 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/probe.log" 2>&1
rc=$?; echo "== probe rc=$rc $((SECONDS - t0)) s"; show "$o/probe.log"
if [ $rc = 0 ]; then
  a="fp8_m96w96_n128x128_k128_s3_wgmma_sk1,fp8_m96w96_n128x128_k128_s4_wgmma_sk1,fp8_m96w96_n128x64_k128_s4_wgmma_sk1,fp8_m32w32_n256x128_k128_s3_wgmma_sk1,fp8_m64w64_n128x256_k128_s3_wgmma_sk1"
  spec=""; for m in 256 304 336 336,skewed 512 1024; do spec+="$m:$a;"; done
  TUNETAB_MOE_WIDE_ALL=1 TUNETAB_TIME_MOE="${spec%;}" timeout 150 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time.log" 2>&1
  echo "== new kernel rc=$? $((SECONDS - t0)) s"; show "$o/time.log"
  TUNETAB_TIME_MOE="336:fp8_m96w96_n128x128_k128_s4_wgmma_sk1" timeout 80 \
    ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/sol.txt" 2>&1
  echo "== ncu rc=$? $((SECONDS - t0)) s"
  grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput" "$o/sol.txt" | sed 's/(Moe[A-Za-z]*Args).*//'
fi
tar czf "$OUT/c4.tgz" -C "$OUT" c4 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
