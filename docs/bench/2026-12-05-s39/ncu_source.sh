#!/usr/bin/env bash
# Session 39: where the K loop's warps wait, per SASS instruction (ncu's PC sampling, SourceCounters), for cuBLASLt's
# kernel and tunetab's tma3 at 336 x 3072 x 6144: cuBLASLt's tiling as tma3 (128 x 128, 6 stages) runs 1.23x faster
# (call 4). Outputs: <name>.ncu-rep, <name>.sass.csv (the source page) and summary.txt (ncu_top.py).
#   usage: OUT=... bash docs/bench/2026-12-05-s39/ncu_source.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
sec=(--clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight)
shape=336,3072,6144
for cfg in m128n128k128_w64x128_s6_tma3_sk1 m64n192k128_w64x96_s4_tma3_sk1; do
  TUNETAB_TIME_FP8="$shape:$cfg" timeout 90 ncu "${sec[@]}" -k regex:gemm_fp8_blockscale -s 3 -c 1 -f -o "$OUT/$cfg" \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/$cfg.log" 2>&1
  echo "ncu $cfg rc=$? $((SECONDS - t0)) s"
done
timeout 120 ncu "${sec[@]}" --profile-from-start off -c 1 -f -o "$OUT/cublaslt" \
  python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "$shape" > "$OUT/cublaslt.log" 2>&1
echo "ncu cuBLASLt rc=$? $((SECONDS - t0)) s"
for rep in "$OUT"/*.ncu-rep; do
  name=$(basename "$rep" .ncu-rep)
  ncu -i "$rep" --page source --csv --print-source sass > "$OUT/$name.sass.csv" 2> "$OUT/$name.sass.err"
  echo "source page $name rc=$? $(wc -l < "$OUT/$name.sass.csv") lines"
  python3 docs/bench/2026-12-05-s39/ncu_top.py "$OUT/$name.sass.csv" >> "$OUT/summary.txt" 2>&1
done
cat "$OUT/summary.txt" | head -150
