#!/usr/bin/env bash
# Session 36's device call, repeated until the tune's rc is 0 (carry .carry, main's binaries; the database resumes
# from runs/glm5.db.gz, or from build/glm5.db on a still-warm machine).
# On the H200: the fused-MoE key first (its 13 rows are stale since 17e3d51; a current key is skipped in seconds),
# then the whole profile in the time left (tma2's FP8 rows re-judged, the 91 dense fine rows), then the benchmarks
# (MoE, then FP8, each with its baseline in the same call) once the tune's rc is 0.
# On any other GPU a tune would start every row again (tune_profile.sh refuses it): one half of scripts/gpu_check.sh.
#   usage: OUT=... CHECK=1|2 bash docs/bench/2026-12-05-s36/call.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-570}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
if [[ $gpu != *H200* ]]; then
  if [ "${CHECK:-1}" = 1 ]; then
    parts="unit gpu" tests='GemmFp8Gpu.*:MoeGpu.*:MoeGpuConfigs.*'
  else
    parts="gpu e2e safety" tests='GemmGpu.*:ValidateGpu.*'
  fi
  BIN=.carry PARTS=$parts GPU_TESTS=$tests STEP_TIMEOUT=$((total - 20)) timeout "$total" bash scripts/gpu_check.sh 2>&1 | tail -n 30
  exit
fi
tune() {  # $1: label; the rest: tune_profile.sh's env
  env BIN=.carry OUT="$OUT" "${@:2}" bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_$1.tail" 2>&1
  local rc=$?
  cp "$OUT/glm5.tune.log" "$OUT/tune_$1.log"
  echo "tune $1 rc=$rc at $((SECONDS - t0)) s"; grep -E "key done|gaps|^rc=" "$OUT/tune_$1.log" | tail -n 8 | cut -c1-200
  return $rc
}
tune moe BUDGET_S=$(($(left) - 30)) TUNE_ARGS="--families fused_moe"
rc=1
if [ "$(left)" -ge 90 ]; then tune all BUDGET_S=$(($(left) - 15)); rc=$?; fi
for part in moe fp8; do
  need=70; [ $part = fp8 ] && need=170
  if [ $rc = 0 ] && [ "$(left)" -ge $need ]; then
    timeout $(($(left) - 5)) env BIN=.carry OUT="$OUT/b" TABLES=build/glm5 PARTS=$part bash scripts/bench_fp8_moe.sh \
      > "$OUT/bench_$part.out" 2>&1
    echo "bench $part rc=$? at $((SECONDS - t0)) s"
  fi
done
echo "total $((SECONDS - t0)) s"
