#!/usr/bin/env bash
# Session 29, call 2: call 1's candidate faulted (CUDA_ERROR_ILLEGAL_ADDRESS in every MoE test); compute-sanitizer
# memcheck on one pipeline each: a fused-quant stage 1 of 256 and of 128 rows of W, and a two-group tile (n1 64,
# which keeps the separate quantization: only the padding skip changed it).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
for mc in 128:fp8_m32w32_n256x128_k128_s3_wgmma2_sk1 336:fp8_m96w96_n128x128_k128_s4_wgmma2_sk1 336:fp8_m128w64_n64x128_k128_s4_wgmma2_sk1; do
  TUNETAB_TIME_MOE="$mc" timeout 120 compute-sanitizer --tool memcheck --print-limit 4 \
    .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/san_${mc%%:*}_${mc#*:}.log" 2>&1
  echo "== memcheck $mc rc=$? $((SECONDS - t0)) s"
  grep -E "Invalid|at 0x|by thread|Address|is out of bounds|ERROR SUMMARY|FAILED|TIME" "$OUT/san_${mc%%:*}_${mc#*:}.log" | head -14 | cut -c1-220
done
