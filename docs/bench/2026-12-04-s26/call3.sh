#!/usr/bin/env bash
# Session 26, call 3 (b1a7548's binaries): 1) the ragged-shape test (kSplitK, tma2_p132, 1100 x 3000 x 1536);
# 2) the dense FP8 half of issue 6's benchmark on call 2's tables (runs/glm5) against cuBLASLt;
# 3) gpu_check's end-to-end tune and safety tests if the call has time left (END_S).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-560}
timeout 300 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
echo "ragged rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/ragged.log" | head -n 20
BIN=.carry OUT=$OUT/b PARTS=fp8 timeout $((end - (SECONDS - t0))) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"; grep -iE "ceilings" "$OUT/bench.out"
tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
left=$((end - (SECONDS - t0)))
if [ $left -ge 180 ]; then
  BIN=.carry PARTS="e2e safety" timeout $left bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
  echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/gpu_check.out"
  rm -f "$OUT"/gpu_check/*.db
else
  echo "gpu_check skipped: $left s left"
fi
echo "total $((SECONDS - t0)) s"
