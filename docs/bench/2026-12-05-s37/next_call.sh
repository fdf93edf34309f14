#!/usr/bin/env bash
# The next session's device calls (carry .carry = main's build: `bash scripts/build_device.sh`).
#   CALL=A (H200): GemmFp8Gpu.* (the new 64 x 96 tma2 tile against the reference, ~60-230 s), then the FP8 keys
#           re-tuned with the rows M 257..352 swept over the whole space (`--sweep-rows 257-352`: 288, 320 and 352 of
#           each dense key, where 304 / 336 stay 6-7% over cuBLASLt) and the new tile tried at the anchors, resumed
#           from runs/glm5.db.gz; repeat until the tune's rc is 0, then CALL=B.
#   CALL=B (H200): the FP8 benchmark against cuBLASLt on the new tables (runs/glm5 once committed, or TABLES=build/glm5
#           on the warm machine; tarred), then gpu_check's unit, MoE, e2e and
#           safety parts in the time left; gpu_check's other half (`GemmGpu.*:ValidateGpu.*`) after it.
# Copy the returned glm5.db.gz over runs/glm5.db.gz and the tables (glm5.tables.tgz) into runs/glm5/, and commit.
#   usage: OUT=... CALL=A|B bash docs/bench/2026-12-05-s37/next_call.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-570}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
if [ "${CALL:-A}" = A ]; then
  if [ ! -f build/s38_fp8_tests_ok ]; then
    timeout 260 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*:-GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_gpu.log" 2>&1
    rc=$?; echo "GemmFp8Gpu rc=$rc at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/fp8_gpu.log" | head -8
    [ $rc = 0 ] && mkdir -p build && touch build/s38_fp8_tests_ok
  fi
  env BIN=.carry OUT="$OUT" BUDGET_S=$(($(left) - 20)) TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" \
    bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune.tail" 2>&1
  echo "tune rc=$? at $((SECONDS - t0)) s"; grep -E "key done|gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 12 | cut -c1-200
else
  timeout 240 env BIN=.carry OUT="$OUT/b" TABLES="${TABLES:-runs/glm5}" PARTS=fp8 bash scripts/bench_fp8_moe.sh > "$OUT/bench_fp8.out" 2>&1
  echo "bench fp8 rc=$? at $((SECONDS - t0)) s"; grep "^Worst ratio" "$OUT/bench_fp8.out" | cut -c1-300
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
  BIN=.carry PARTS="unit gpu e2e safety" GPU_TESTS='MoeGpu.*:MoeGpuConfigs.*' STEP_TIMEOUT=$(($(left) - 15)) \
    timeout $(($(left) - 5)) bash scripts/gpu_check.sh 2>&1 | tail -n 14
fi
echo "total $((SECONDS - t0)) s"
