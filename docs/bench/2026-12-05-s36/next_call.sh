#!/usr/bin/env bash
# The next session's two device calls (carry .carry, main's build): what session 36 left, the tune being finished.
#   CALL=A: on the H200, the FP8 benchmark of runs/glm5/ against cuBLASLt (`bench_fp8_moe.sh PARTS=fp8`, ~170 s, the
#           ceilings measured in the call); then gpu_check's unit, MoE GPU tests, e2e tune and safety parts (~330 s).
#   CALL=B: gpu_check's FP8, bf16 and validation GPU tests (GemmFp8Gpu ~295 s, GemmGpu ~160 s, ValidateGpu ~2 s).
# Both halves of gpu_check hold on any sm_90a GPU; the benchmark is the acceptance's and runs only on the H200.
#   usage: OUT=... CALL=A|B bash docs/bench/2026-12-05-s36/next_call.sh   (env TOTAL_S=570; FP8=0: no benchmark)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-570}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
if [ "${CALL:-A}" = A ]; then
  if [[ $gpu == *H200* ]] && [ "${FP8:-1}" = 1 ]; then
    timeout 240 env BIN=.carry OUT="$OUT/b" PARTS=fp8 bash scripts/bench_fp8_moe.sh > "$OUT/bench_fp8.out" 2>&1
    echo "bench fp8 rc=$? at $((SECONDS - t0)) s"; grep "^Worst ratio" "$OUT/bench_fp8.out" | cut -c1-300
  fi
  parts="unit gpu e2e safety" tests='MoeGpu.*:MoeGpuConfigs.*'
else
  parts="gpu" tests='GemmFp8Gpu.*:GemmGpu.*:ValidateGpu.*'
fi
BIN=.carry PARTS=$parts GPU_TESTS=$tests STEP_TIMEOUT=$(($(left) - 15)) timeout $(($(left) - 5)) bash scripts/gpu_check.sh 2>&1 |
  tail -n 20
echo "total $((SECONDS - t0)) s"
