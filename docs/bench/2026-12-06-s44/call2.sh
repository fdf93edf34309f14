#!/usr/bin/env bash
# Session 44's second device call: tma4 stream-K (".._tma4_p132_sk1", binaries .carry_sk). The ragged-shape test on
# every tma4 config of the list (stream-K's four among them), then 128 x 128 and 128 x 96 plain, in clusters and in
# stream-K at the dense M 256-1024 shapes, two passes in opposite orders; cuBLASLt on the same shapes. On an H200,
# then session 41's call.sh with TIMES=0 (the FP8 re-tune and the benchmark) on .carry_sk (as .carry) if the ragged
# test passed.
# Outputs: ragged.log, time.*.log, cublaslt.* (H200: also glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz).
#   usage: OUT=... bash docs/bench/2026-12-06-s44/call2.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
TUNETAB_FP8_ONLY=tma4 timeout 200 .carry_sk/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' \
  > "$OUT/ragged.log" 2>&1
ragged=$?
echo "ragged tma4 rc=$ragged at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|Failure|p132" "$OUT/ragged.log" | head -12
shapes="304,4096,2048 336,4096,2048 256,6144,2048 336,3072,6144 304,4096,4096 1024,4096,2048"
cfgs="m128n128k128_w64x128_s6_tma4_sk1 m128n128k128_w64x128_s6_tma4_p132_sk1 m128n128k128_w64x128_s6_tma4_cn2_sk1"
cfgs+=" m128n96k128_w64x96_s6_tma4_sk1 m128n96k128_w64x96_s6_tma4_p132_sk1 m128n64k128_w64x64_s6_tma4_p132_sk1"
spec() {  # $1: the configs in order
  local s="" shape
  for shape in $shapes; do s+="$shape:$(echo $1 | tr ' ' ',');"; done
  echo "${s%;}"
}
rev=$(echo $cfgs | tr ' ' '\n' | tac | tr '\n' ' ')
if [ $ragged = 0 ]; then
  for order in fwd rev; do
    list=$cfgs; [ $order = rev ] && list=$rev
    TUNETAB_TIME_FP8="$(spec "$list")" timeout 90 .carry_sk/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
      > "$OUT/time.$order.log" 2>&1
    echo "time ($order) rc=$? at $((SECONDS - t0)) s"
  done
  grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w64x[0-9]*//; s/ min_us.*//' | sort -s -k2,2
fi
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
  > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 7 "$OUT/cublaslt.log"
if [[ $gpu == *H200* ]]; then
  if [ $ragged = 0 ]; then
    rm -rf .carry && cp -r .carry_sk .carry
    OUT=$OUT TIMES=0 TOTAL_S=$((570 - (SECONDS - t0))) bash docs/bench/2026-12-06-s41/call.sh
  fi
fi
echo "total $((SECONDS - t0)) s"
