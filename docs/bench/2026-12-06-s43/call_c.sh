#!/usr/bin/env bash
# Session 43's second device call. On an H200: call.sh (the acceptance tune and benchmark, session 41's binaries in
# .carry). On another GPU: tma4 in thread-block clusters sharing tiles by TMA multicast (branch s43-tma4-cluster,
# binaries in .carry_c): the ragged-shape GPU test on the cluster configs, then each cluster config against its plain
# twin, both orders, with cuBLASLt at the same shapes. Why: call.sh's K sweep on the H100 put tunetab's K loop at
# ~7 TB/s of L2-to-SM traffic whatever the tile (72 or 96 CTAs), where cuBLASLt (clusters of 4) moves ~40% less a K block.
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call_c.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then exec bash docs/bench/2026-12-06-s43/call.sh; fi
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
TUNETAB_FP8_ONLY=tma4_c timeout 200 .carry_c/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' \
  > "$OUT/ragged.log" 2>&1
echo "ragged (clusters) rc=$? at $((SECONDS - t0)) s"; grep -E "OK|FAILED|Failure|passed" "$OUT/ragged.log" | head -20
shapes="304,4096,2048 336,3072,6144 256,6144,2048 336,4096,2048 304,4096,4096 1024,4096,2048 2048,6144,1536"
spec() {  # $1: the cluster suffixes in order
  local s="" shape t c cfgs
  for shape in $shapes; do
    cfgs=""
    for t in m128n128k128_w64x128_s6 m128n96k128_w64x96_s6 m64n192k128_w64x96_s4; do
      for c in $1; do cfgs+="${t}_tma4${c/plain/}_sk1,"; done
    done
    s+="$shape:${cfgs%,};"
  done
  echo "${s%;}"
}
for order in "plain _cn2 _cn4 _c2 _c2_cn2" "_c2_cn2 _c2 _cn4 _cn2 plain"; do
  tag=$(echo $order | cut -d' ' -f1)
  TUNETAB_TIME_FP8="$(spec "$order")" timeout 150 .carry_c/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/time.$tag.log" 2>&1
  echo "time (from $tag) rc=$? at $((SECONDS - t0)) s"
done
grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w64x[0-9]*//'
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
  > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 8 "$OUT/cublaslt.log"
echo "total $((SECONDS - t0)) s"
