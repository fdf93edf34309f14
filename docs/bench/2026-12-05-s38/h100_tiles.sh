#!/usr/bin/env bash
# Session 38, on an H100 (no H200 came): the dense FP8 shapes at M <= 336 that stayed over cuBLASLt on the H200
# (session 37), each timed with the tuner's method for the row's config, the new 64 x 96 tma2 tile and its
# neighbours, then cuBLASLt blockwise in the same call. Ratios on the H100 only; the H200's tune decides the rows.
#   usage: OUT=... bash docs/bench/2026-12-05-s38/h100_tiles.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
cfgs="m64n96k128_w64x96_s4_tma2_sk1,m64n96k128_w64x96_s4_tma2_p132_sk1,m128n96k128_w64x96_s4_tma2_sk1"
cfgs+=",m64n128k128_w64x128_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,m64n256k128_w64x128_s4_tma2_sk1"
cfgs+=",m128n64k128_w64x64_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk1,m64n64k128_w64x64_s4_tma2_sk1"
cfgs+=",m64n96k128_w64x96_s4_tma2_sk2,m64n128k128_w64x128_s4_tma2_sk2"
shapes="256,6144,1536;256,6144,2048;304,4096,2048;336,4096,2048;304,3072,6144;336,3072,6144"
spec=""
IFS=';' read -ra sh <<< "$shapes"
for s in "${sh[@]}"; do spec+="${spec:+;}$s:$cfgs"; done
t0=$SECONDS
TUNETAB_TIME_FP8="$spec" .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time.log" 2>&1
echo "tunetab rc=$? $((SECONDS - t0)) s"
(cd bench && python3 fp8_baseline.py --shapes "$shapes" --json "$OUT/cublaslt.json") > "$OUT/cublaslt.log" 2>&1
echo "cublaslt rc=$? $((SECONDS - t0)) s"
python3 - "$OUT/time.log" "$OUT/cublaslt.json" <<'PY'
import json, re, sys
base = {}
for r in json.load(open(sys.argv[2]))["shapes"]:
    base[(r["m"], r["n"], r["k"])] = r
times = {}
for line in open(sys.argv[1]):
    m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
    if m: times.setdefault(tuple(map(int, m.group(1, 2, 3))), []).append((float(m.group(5)), m.group(4)))
for key, ts in times.items():
    b = base.get(key, {})
    bu = b.get("median_us") or b.get("us")
    print(key, "cuBLASLt", bu)
    for us, name in sorted(ts):
        print(f"   {us:8.2f} us  {us / bu if bu else float('nan'):.3f}x  {name}")
PY
