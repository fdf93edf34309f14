#!/usr/bin/env bash
# Session 43's seventh device call. On an H200: call.sh (the acceptance tune and benchmark). On another GPU: call 2's
# tma4 clusters again with call 6's producer tail and the start's cluster barrier split (CUTLASS's arrive.relaxed after the barriers' init, each thread's wait before its first copy to or arrival on a peer; branch s43-tma4-cluster2,
# binaries .carry_c2): in call 2 clusters took about 1.4 us more at K 2048 but sped the K loop (0.47 -> 0.40 us a K
# block from K 2048 to 4096 at 304 x 4096); a barrier.cluster with .release at the end makes each thread wait for its
# output stores. The ragged-shape test on the cluster entries, then plain / cn2 / cn4 / c2 in both orders, cuBLASLt.
#   usage: OUT=... bash docs/bench/2026-12-06-s43/call7.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then exec bash docs/bench/2026-12-06-s43/call.sh; fi
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
TUNETAB_FP8_ONLY=tma4_c timeout 120 .carry_c2/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' \
  > "$OUT/ragged.log" 2>&1
echo "ragged (clusters) rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|Failure" "$OUT/ragged.log" | head -8
shapes="304,4096,2048 336,4096,2048 256,6144,2048 304,4096,4096 336,3072,6144"
spec() {  # $1: the cluster suffixes in order
  local s="" shape t c cfgs
  for shape in $shapes; do
    cfgs=""
    for t in m128n128k128_w64x128_s6 m128n96k128_w64x96_s6; do
      for c in $1; do cfgs+="${t}_tma4${c/plain/}_sk1,"; done
    done
    s+="$shape:${cfgs%,};"
  done
  echo "${s%;}"
}
for order in "plain _cn2 _cn4 _c2" "_c2 _cn4 _cn2 plain"; do
  tag=$(echo $order | cut -d' ' -f1)
  TUNETAB_TIME_FP8="$(spec "$order")" timeout 100 .carry_c2/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/time.$tag.log" 2>&1
  echo "time (from $tag) rc=$? at $((SECONDS - t0)) s"
done
grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w64x[0-9]*//'
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(echo $shapes | tr ' ' ';')" --json "$OUT/cublaslt.json") \
  > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 6 "$OUT/cublaslt.log"
echo "total $((SECONDS - t0)) s"
