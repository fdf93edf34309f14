#!/usr/bin/env bash
# The bf16 GEMM benchmark (docs/performance.md), on the device machine: tunes the built-in 21 shapes,
# then times torch/cuBLAS on the same shapes in the same call, with the same method, and reports both
# against the roofline measured in that call.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.carry}
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
# NOTE: a benchmark of the tuned rows, not a coverage run: each exported row is still validated at its own M
# and at the sampled Ms of its bucket (ends, powers of two, primes, tile edges) on M 1..4096.
"$bin/tunetab" tune --db "$out/bench.db" --export "$out/bf16_tuned_gemm.csv" --no-progress --m-max 4096 --every-m 0 "$@" 2>&1 | tee "$out/bench_tune.log" | sed -n '/^M /,$p'
echo "tune wall time: $((SECONDS - t0)) s"
shapes=$(python3 -c "print(';'.join(f'{m},{n},{k}' for n,k in [(3072,1536),(6144,2048),(3072,6144)] for m in [1,16,64,304,336,1024,4096]))")
PYTHONUNBUFFERED=1 python3 bench/torch_baseline.py --shapes "$shapes" --json "$out/baseline.json" > "$out/baseline.log" 2>&1
python3 bench/report.py --tuned "$out/bf16_tuned_gemm.csv" --baseline "$out/baseline.json" | tee "$out/report.md"
