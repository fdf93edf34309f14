#!/usr/bin/env bash
# Session 41's H200 call, for the next session: tma3 against tma4 (16-byte scale loads) on the dense M <= 336 shapes
# with cuBLASLt's 128 x 128 tile added, both orders, and cuBLASLt on the same shapes; then, on an H200 only, session
# 38's call.sh: the FP8 keys re-tuned with tma4 in the space, resumed from runs/glm5.db.gz, and the benchmark on the
# exported tables when the tune ends with rc 0. TIMES=0 leaves the timings out. Outputs: time.*.log, cublaslt.*,
# glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz.
#   usage: OUT=... bash docs/bench/2026-12-06-s41/call.sh   (env TOTAL_S=560, TIMES=1)
# (Session 41's call 5 ran its first form, 5a89981, which stopped at once on a GPU other than an H200.)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
shapes="336,3072,6144 304,4096,2048 336,4096,2048 256,6144,2048 256,6144,1536 1024,4096,2048"
tiles="m128n128k128_w64x128_s6 m128n96k128_w64x96_s6 m64n192k128_w64x96_s4"
spec() {  # $1: the kinds in order
  local s="" shape t kind cfgs
  for shape in $shapes; do
    cfgs=""
    for t in $tiles; do for kind in $1; do cfgs+="${t}_${kind}_sk1,"; done; done
    s+="$shape:${cfgs%,};"
  done
  echo "${s%;}"
}
if [ "${TIMES:-1}" != 0 ]; then
  for order in "tma3 tma4" "tma4 tma3"; do
    TUNETAB_TIME_FP8="$(spec "$order")" timeout 90 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
      > "$OUT/time.${order// /_}.log" 2>&1
    echo "time ($order) rc=$? at $((SECONDS - t0)) s"
  done
  grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
  (cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
    > "$OUT/cublaslt.log" 2>&1
  echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 7 "$OUT/cublaslt.log"
fi
[[ $gpu == *H200* ]] || { echo "not an H200: no tune; total $((SECONDS - t0)) s"; exit 0; }
TOTAL_S=$((${TOTAL_S:-560} - (SECONDS - t0))) bash docs/bench/2026-12-05-s38/call.sh
