#!/usr/bin/env bash
# Session 15, call 3 (binaries of ce85106, the tune's): issue 6's benchmark on the tables the tune exported in call 2
# (runs/glm5), both families against their baselines in this one call; then the GemmFp8Gpu tests call 1's bound cut
# (M=1 over every config, tma2 among them; the software decode; poison; guard bands; one allocation) and
# gpu_check's e2e and safety parts with what is left.
#   usage (on the device): bash docs/bench/2026-12-02-s15/call3.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-560}
t0=$SECONDS
o=$OUT/c3; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
TABLES=runs/glm5 OUT=$o/b timeout 300 bash scripts/bench_fp8_moe.sh > "$o/bench.out" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"
timeout 170 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*-*TimeConfigs*:*Ragged*' > "$o/fp8_gpu.log" 2>&1
echo "gpu rc=$? $((SECONDS - t0)) s"; grep -E '^\[  (PASSED|FAILED) |Failure|^\[       OK|^\[  FAILED' "$o/fp8_gpu.log" | head -12
left=$(( total - (SECONDS - t0) - 15 ))
if [ $left -gt 60 ]; then
  PARTS="e2e safety" STEP_TIMEOUT=$left timeout -s TERM $left bash scripts/gpu_check.sh > "$o/gpu_check.out" 2>&1
  echo "gpu_check e2e safety rc=$? $((SECONDS - t0)) s"; tail -n 12 "$o/gpu_check.out"
fi
grep -vE "^\|" "$o/bench.out" | tail -n 12
grep -E "^\|" "$o/bench.out" | head -120
tar czf "$OUT/c3.tgz" -C "$OUT" c3 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
