#!/usr/bin/env bash
# Session 43's device call. On an H200: session 41's call.sh with TIMES=0 (the FP8 re-tune with tma4 in the space,
# resumed from runs/glm5.db.gz, and the benchmark on its tables). On another GPU (the device tool lends mostly H100s
# for an H200): where does tunetab's time go at K 2048, in a fixed part or per K block? tma3 and tma4 against
# cuBLASLt at 304 x 4096 x K for K 512..4096 and 336 x 3072 x K for K 2048 / 6144, each config validated first, both
# orders. Outputs: (H200) glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz; (else) time.*.log, cublaslt.*.
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [[ $gpu == *H200* ]]; then
  OUT=$OUT TIMES=0 TOTAL_S=${TOTAL_S:-570} bash docs/bench/2026-12-06-s41/call.sh
  exit $?
fi
shapes="304,4096,512 304,4096,1024 304,4096,2048 304,4096,4096 336,3072,2048 336,3072,6144"
tiles="m128n96k128_w64x96_s6 m128n128k128_w64x128_s6"
spec() {  # $1: the kinds in order
  local s="" shape t kind cfgs
  for shape in $shapes; do
    cfgs=""
    for t in $tiles; do for kind in $1; do cfgs+="${t}_${kind}_sk1,"; done; done
    s+="$shape:${cfgs%,};"
  done
  echo "${s%;}"
}
for order in "tma3 tma4" "tma4 tma3"; do
  TUNETAB_TIME_FP8="$(spec "$order")" timeout 120 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/time.${order// /_}.log" 2>&1
  echo "time ($order) rc=$? at $((SECONDS - t0)) s"
done
grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
  > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 7 "$OUT/cublaslt.log"
echo "total $((SECONDS - t0)) s"
