#!/usr/bin/env bash
# Session 29, call 3: the fault again, with the pointers each launch passes (TUNETAB_DEBUG_MOE, a debug build) and
# every memcheck error's kernel, for one fused-quant config at M=128.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mc=128:fp8_m32w32_n256x128_k128_s3_wgmma2_sk1
TUNETAB_DEBUG_MOE=1 TUNETAB_TIME_MOE="$mc" timeout 120 compute-sanitizer --tool memcheck --print-limit 200 \
  .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/san.log" 2>&1
echo "rc=$?"
grep -E "DEBUG" "$OUT/san.log" | head -8
grep -E "^=========     at |^========= Invalid" "$OUT/san.log" | sort | uniq -c | head
grep -nE "^========= Invalid|DEBUG" "$OUT/san.log" | head -12 | cut -c1-120
grep -E "Access to|nearest" "$OUT/san.log" | head -4
