#!/usr/bin/env bash
# Session 13, call 2 (binaries of d7bbdba in .carry/): issue 6's benchmark on the tables of call 1's finished tune
# (runs/glm5), both families against their baselines, then Nsight Compute on the MoE at M=336: the exported
# 32-token pairing against the 128-token paired stage 1 that call 1 measured about twice as slow.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
OUT=$OUT/b bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1; echo "bench rc=$? $((SECONDS - t0)) s"
tail -n 45 "$OUT/bench.out"
o=$OUT/ncu; mkdir -p "$o"
OUT=$o FP8= MOE="336:fp8_m32w32_n256x128_k128_s3_wgmma_sk1;336:fp8_m128w128_n64x128_k128_s4_wgmma_sk1" \
  timeout 200 bash scripts/profile_fp8_moe.sh > "$o/ncu_digest.txt" 2>&1
echo "ncu rc=$? $((SECONDS - t0)) s"; cat "$o/ncu_digest.txt" | head -60
tar czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$o"
tar czf "$OUT/bench.tgz" -C "$OUT" b && rm -rf "$OUT/b"  # the device tool returns at most 8 files
