#!/usr/bin/env bash
# Session 14, call 5 (binaries of adff9a3): the MoE GPU correctness test with the wgmma2 configs, the profile tune
# resumed (the 7 wgmma2 configs are new to the database; every other verdict stands), and, if it finishes, the MoE
# half of issue 6's benchmark on its tables against the bf16 grouped_mm baseline in the same call.
#   usage (on the device): bash docs/bench/2026-12-02-s14/call5.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-570}
t0=$SECONDS
o=$OUT/c5; mkdir -p "$o"
timeout 110 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.PipelineMatchesReferenceAcrossMRoutingAndDtype:MoeGpuConfigs.*' > "$o/moe_gpu.log" 2>&1
echo "gpu rc=$? $((SECONDS - t0)) s"; grep -E '^\[  (PASSED|FAILED) |Failure|^\[       OK|rel_l2' "$o/moe_gpu.log" | head -12
left=$(( total - (SECONDS - t0) - 80 ))
BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
rc=$?; echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "fmoe|fp8_m|rc=" "$OUT/glm5.tune.log" | tail -22
if [ $rc = 0 ]; then
  TABLES=build/glm5 OUT=$o/b PARTS=moe timeout 90 bash scripts/bench_fp8_moe.sh > "$o/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; tail -n 22 "$o/bench.out"
fi
tar czf "$OUT/c5.tgz" -C "$OUT" c5 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
