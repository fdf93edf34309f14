#!/usr/bin/env bash
# Session 39, call 4: ncu_gap.sh (any GPU), then on an H200 issue 6's benchmark again on the committed tables
# (runs/glm5, call 3's tune): a second run in another call, for the run-to-run spread of the ratios at the floors.
#   usage: OUT=... bash docs/bench/2026-12-05-s39/call4.sh   (NCU=0: the benchmark only)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
if [ "${NCU:-1}" != 0 ]; then
  mkdir -p "$OUT/ncu"
  OUT="$OUT/ncu" timeout 300 bash docs/bench/2026-12-05-s39/ncu_gap.sh > "$OUT/ncu/summary.txt" 2>&1
  echo "ncu rc=$? at $((SECONDS - t0)) s"
  tar czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
fi
if [[ $gpu == *H200* ]]; then
  timeout 240 env BIN=.carry OUT="$OUT/bench" bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? at $((SECONDS - t0)) s"; grep -E "^Worst ratio|MoE floor" "$OUT/bench.out" | cut -c1-300
  grep -E "^\| (304|336) \| (3072|4096) \| (6144|2048) |^\| 336 \| balanced" "$OUT/bench.out"
  cp "$OUT/bench.out" "$OUT/bench/" 2>/dev/null; tar czf "$OUT/bench.tgz" -C "$OUT" bench && rm -rf "$OUT/bench"
fi
echo "total $((SECONDS - t0)) s"
