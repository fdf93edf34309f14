#!/usr/bin/env bash
# Session 15, call 4: call 3's MoE half again: bench/report6.py did not read wgmma2 names from the table (its pattern
# took letters only before _sk), so the timing tool got the whole kernel name and failed. Fixed; the MoE half
# of the benchmark, tunetab and the grouped_mm baseline in this call.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c4; mkdir -p "$o"
TABLES=runs/glm5 OUT=$o/b PARTS=moe timeout 240 bash scripts/bench_fp8_moe.sh > "$o/bench.out" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"
grep -E "^\|" "$o/bench.out" | tail -n 30
tar czf "$OUT/c4.tgz" -C "$OUT" c4 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
