#!/usr/bin/env bash
# Session 40, call 3: tma4 (tma3 with each tile's scales in two bulk copies) checked against the reference on the ragged shapes,
# then timed against tma3 on the same tiles (both orders) and cuBLASLt at the dense M <= 336 shapes still over it and
# two more; then ncu's source counters of tma4's 128 x 128 tile at 336 x 3072 x 6144 (call 1 had tma3's, call 2 the per-stage TMA boxes').
#   usage: OUT=... bash docs/bench/2026-12-05-s40/call3.sh   (env ORDERS="tma3 tma4|tma4 tma3": the timing orders; NCU=0)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
echo "ragged rc=$? at $((SECONDS - t0)) s"; grep -E "OK|FAILED|Failure" "$OUT/ragged.log" | head -20
spec() {  # $1: the kinds in order
  local s="" shape tiles
  for entry in "336,3072,6144:m64n192k128_w64x96_s4 m128n96k128_w64x96_s6 m128n128k128_w64x128_s6 m128n96k128_w64x96_s4" \
               "304,4096,2048:m64n192k128_w64x96_s4 m128n96k128_w64x96_s6 m128n64k128_w64x64_s4" \
               "336,4096,2048:m128n96k128_w64x96_s6 m64n192k128_w64x96_s4" \
               "256,6144,2048:m128n96k128_w64x96_s6 m128n64k128_w64x64_s4" \
               "256,6144,1536:m128n96k128_w64x96_s6 m64n192k128_w64x96_s4" \
               "1024,4096,2048:m128n128k128_w64x128_s6 m128n96k128_w64x96_s6" \
               "2048,6144,1536:m128n128k128_w64x128_s6 m128n96k128_w64x96_s6"; do
    shape=${entry%%:*}; tiles=${entry#*:}; local cfgs=""
    for t in $tiles; do for kind in $1; do cfgs+="${t}_${kind}_sk1,"; done; done
    s+="$shape:${cfgs%,};"
  done
  echo "${s%;}"
}
IFS="|" read -r -a orders <<< "${ORDERS:-tma3 tma4|tma4 tma3}"
for order in "${orders[@]}"; do
  TUNETAB_TIME_FP8="$(spec "$order")" timeout 150 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/time.$(echo $order | tr ' ' _).log" 2>&1
  echo "time ($order) rc=$? at $((SECONDS - t0)) s"
done
grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
(cd bench && timeout 120 python3 fp8_baseline.py --shapes "336,3072,6144;304,4096,2048;336,4096,2048;256,6144,2048;256,6144,1536;1024,4096,2048;2048,6144,1536" \
  --json "$OUT/cublaslt.json") > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; cat "$OUT/cublaslt.log" | tail -8
[ "${NCU:-1}" = 0 ] && { echo "total $((SECONDS - t0)) s"; exit 0; }
mkdir -p "$OUT/ncu"
cfg=m128n128k128_w64x128_s6_tma4_sk1
TUNETAB_TIME_FP8="336,3072,6144:$cfg" timeout 90 ncu --clock-control none --section SourceCounters --section WarpStateStats \
  --section SpeedOfLight -k regex:gemm_fp8_blockscale -s 3 -c 1 -f -o "$OUT/ncu/$cfg" \
  .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/ncu/$cfg.log" 2>&1
echo "ncu rc=$? at $((SECONDS - t0)) s"
ncu -i "$OUT/ncu/$cfg.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/$cfg.sass.csv" 2>/dev/null
ncu -i "$OUT/ncu/$cfg.ncu-rep" --page details > "$OUT/ncu/$cfg.details.txt" 2>/dev/null
python3 docs/bench/2026-12-05-s39/ncu_top.py "$OUT/ncu/$cfg.sass.csv" 2>&1 | head -30
grep -E "Duration|L2 Cache Throughput|No Eligible" "$OUT/ncu/$cfg.details.txt"
tar czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
echo "total $((SECONDS - t0)) s"
