#!/usr/bin/env bash
# Session 22, the second call made (after the revert): HEAD's binaries (.carry; the MoE templates are c8f4573's, the
# tuned ones): MoeGpu, then gpu_check's e2e and safety parts, which also cover d080276's runner change (session 21
# could not run it on the GPU) and the Workload's buffer sizing from enumerate().
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
echo "MoeGpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu.log" | head -12
BIN=.carry PARTS="e2e safety" timeout $((560 - (SECONDS - t0))) bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 30 "$OUT/gpu_check.out"
echo "total $((SECONDS - t0)) s"
