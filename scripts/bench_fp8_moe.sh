#!/usr/bin/env bash
# Issue 6's benchmark, in one device call: tunetab's exported FP8 rows (the profile tune's tables: the dense
# block-scaled GEMM keys and the fused MoE) re-timed with the tuner's method, each M with the row its consumer's
# lookup picks, then the library baselines in the same call (cuBLASLt blockwise `torch._scaled_mm`; the bf16
# `torch._grouped_mm` MoE), and bench/report6.py's tables against both and the roofline measured in the call.
# PARTS="fp8" or "moe" runs one family (its tunetab timings and its baseline, still in one call) where both do
# not fit in one call; the default is both.
#   usage: TABLES=<export dir, default runs/glm5> bash scripts/bench_fp8_moe.sh  (env: BIN=.carry, OUT, M=1,16,..., PARTS)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.carry}
out=${OUT:-out}
tables=${TABLES:-runs/glm5}
ms=${M:-1,16,64,128,256,304,336,512,1024,2048,4096}
mkdir -p "$out"
out=$(cd "$out" && pwd)  # absolute: the baselines run from bench/
parts=" ${PARTS:-fp8 moe} "
[ -f "$tables/a8w8_blockscale_tuned_gemm.csv" ] && [ -f "$tables/tuned_fmoe.csv" ] || { echo "no exported tables in $tables" >&2; exit 2; }
eval "$(python3 bench/report6.py specs --tables "$tables" --m "$ms")"
t0=$SECONDS
args=()
if [[ $parts == *" fp8 "* ]]; then
  TUNETAB_TIME_FP8="$FP8_SPEC" "$bin/tunetab_gpu_tests" --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$out/fp8_time.log" 2>&1 || true
  echo "tunetab FP8 timing: $((SECONDS - t0)) s"
  (cd bench && PYTHONUNBUFFERED=1 python3 fp8_baseline.py --shapes "$FP8_SHAPES" --json "$out/fp8_baseline.json") > "$out/fp8_baseline.log" 2>&1
  echo "with cuBLASLt: $((SECONDS - t0)) s"
  args+=(--fp8-time "$out/fp8_time.log" --fp8-baseline "$out/fp8_baseline.json")
fi
if [[ $parts == *" moe "* ]]; then
  TUNETAB_TIME_MOE="$MOE_SPEC" "$bin/tunetab_gpu_tests" --gtest_filter='MoeGpu.TimeConfigs*' > "$out/moe_time.log" 2>&1 || true
  echo "tunetab MoE timing: $((SECONDS - t0)) s"
  rm -f "$out/moe_baseline.jsonl"
  (cd bench && PYTHONUNBUFFERED=1 python3 moe_baseline.py --m "$ms" --routing balanced,skewed --out "$out/moe_baseline.jsonl") > "$out/moe_baseline.log" 2>&1
  echo "with the grouped_mm baseline: $((SECONDS - t0)) s"
  args+=(--moe-time "$out/moe_time.log" --moe-baseline "$out/moe_baseline.jsonl")
fi
python3 bench/report6.py report --tables "$tables" "${args[@]}" | tee "$out/report6.md"
