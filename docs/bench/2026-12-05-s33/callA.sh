#!/usr/bin/env bash
# Session 33, call A. Carry .carry_s33 (main with s33-moe merged: s31-moe-small without its programmatic launches;
# tunetab + tunetab_gpu_tests) and .carry_x (s32's build_x.sh: main before the merge + ablate.patch).
# 1. MoeGpu.* + MoeGpuConfigs.* on the merge (~60 s); the rest runs only if they pass.
# 2. s32's call_scales.sh: tma2 with the tile's scales in shared memory (mask 32) against mask 0 (~150 s).
# 3. The profile tune on the merge with the time left (resumable: rc 124 is expected), the database back in $OUT.
#   usage: OUT=... bash docs/bench/2026-12-05-s33/callA.sh   (env TOTAL_S=585)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-585}
timeout 200 .carry_s33/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
rc=$?
echo "MoeGpu rc=$rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|Expected|Which is" "$OUT/moe_gpu.log" | head -12
OUT=$OUT bash docs/bench/2026-12-05-s32/next/call_scales.sh 2>&1 | tail -22
[ $rc = 0 ] || { echo "MoeGpu failed: no tune"; exit 1; }
left=$((total - (SECONDS - t0)))
BIN=.carry_s33 BUDGET_S=$((left - 15)) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
