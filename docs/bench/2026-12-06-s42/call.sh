#!/usr/bin/env bash
# Session 42's call: tma4's 64 x 160 tile (two 80-wide consumers) against the tiles the tables use at M 256-336, both
# orders, and cuBLASLt on the same shapes; then on an H200 session 38's call.sh (the FP8 keys re-tuned with tma4 and
# its 64 x 160 tile in the space, resumed from runs/glm5.db.gz, and the benchmark on the exported tables when the tune
# ends with rc 0); on another GPU the ragged-shape test instead. TIMES=0 leaves the timings out. Outputs: time.*.log,
# cublaslt.*, ragged.log, glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz. RAGGED=0 leaves the ragged-shape test
# out (gpu_check's first part runs it).
#   usage: OUT=... bash docs/bench/2026-12-06-s42/call.sh   (env TOTAL_S=560, TIMES=1, RAGGED=1)
# Call 1 (H100, 52d627a) timed the 64 x 160 tile: never the fastest at these six shapes (docs/performance.md, session 42);
# the tile was reverted, so its configs no longer exist: run it with TIMES=0 from then on.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
shapes="304,4096,2048 288,4096,2048 336,3072,6144 304,3072,6144 336,4096,2048 256,6144,2048"
cfgs="m64n160k128_w64x80_s6_tma4 m64n192k128_w64x96_s4_tma4 m64n192k128_w64x96_s4_tma3 m128n96k128_w64x96_s6_tma4
      m128n128k128_w64x128_s6_tma4"
spec() {  # $1: the configs in order
  local s="" shape c list
  for shape in $shapes; do
    list=""
    for c in $1; do list+="${c}_sk1,"; done
    s+="$shape:${list%,};"
  done
  echo "${s%;}"
}
if [ "${TIMES:-1}" != 0 ]; then
  for order in fwd rev; do
    list=$cfgs; [ $order = rev ] && list=$(echo $cfgs | tr ' ' '\n' | tac | tr '\n' ' ')
    TUNETAB_TIME_FP8="$(spec "$list")" timeout 90 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
      > "$OUT/time.$order.log" 2>&1
    echo "time ($order) rc=$? at $((SECONDS - t0)) s"
  done
  grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
  (cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
    > "$OUT/cublaslt.log" 2>&1
  echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 7 "$OUT/cublaslt.log"
fi
if [[ $gpu != *H200* ]]; then
  [ "${RAGGED:-1}" = 0 ] && { echo "not an H200: no tune; total $((SECONDS - t0)) s"; exit 0; }
  timeout 150 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
  echo "ragged rc=$? at $((SECONDS - t0)) s"; grep -E "Failure|PASSED|FAILED|OK \]" "$OUT/ragged.log" | head -n 12
  echo "not an H200: no tune; total $((SECONDS - t0)) s"; exit 0
fi
TOTAL_S=$((${TOTAL_S:-560} - (SECONDS - t0))) bash docs/bench/2026-12-05-s38/call.sh
