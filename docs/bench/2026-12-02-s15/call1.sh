#!/usr/bin/env bash
# Session 15, call 1 (binaries of 1c2e64c): tma2's first GPU run: GemmFp8Gpu.* (its 5 configs on the ragged
# shapes, N=1001 among them), then tma2 against tma on the dense shapes session 13's benchmark missed (the timing
# tool validates each config first), then, if the tests passed, the profile tune resumed with what is left.
#   usage (on the device): bash docs/bench/2026-12-02-s15/call1.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
t0=$SECONDS
o=$OUT/c1; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 200 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*-*TimeConfigs*' > "$o/fp8_gpu.log" 2>&1
grc=$?; echo "gpu rc=$grc $((SECONDS - t0)) s"; grep -E '^\[  (PASSED|FAILED) |Failure|^\[       OK|^\[  FAILED' "$o/fp8_gpu.log" | head -20
grep -B2 -A6 "Failure" "$o/fp8_gpu.log" | head -40
tiles="m64n64k128_w64x64 m64n128k128_w64x64 m64n128k128_w64x128 m64n192k128_w64x192 m64n256k128_w64x128 m128n64k128_w64x64 m128n128k128_w64x64 m128n128k128_w64x128 m128n192k128_w64x192"
cfgs=""; for t in $tiles; do cfgs+="${t}_s4_tma_sk1,${t}_s4_tma2_sk1,${t}_s6_tma2_sk1,"; done
cfgs+="m128n128k128_w64x128_s4_tma_p132_sk1,m64n128k128_w64x64_s6_tma_sk1"
spec=""; for s in 336,4096,2048 336,2624,6144 336,6144,1536 1024,3584,512 1024,6144,2048 2048,4096,2048; do spec+="$s:$cfgs;"; done
TUNETAB_TIME_FP8="${spec%;}" timeout 170 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$o/time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME" "$o/time.log" | awk '{print $2, $3, $4}' | sed 's/gemm_fp8_blockscale:\?//'
grep -E "Failure|unsupported" -A3 "$o/time.log" | head -20
if [ $grc = 0 ]; then
  left=$(( total - (SECONDS - t0) - 25 ))
  BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "rc=|skewed|tma2|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-160 | tail -45
fi
tar czf "$OUT/c1.tgz" -C "$OUT" c1 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
