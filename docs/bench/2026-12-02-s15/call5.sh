#!/usr/bin/env bash
# Session 15, call 5 (the last of the budget): are the dense misses of call 3 the kernels' or the search's? Every
# tma2 tile at split-K 1, 2 and 4 on five missed shapes (the timing tool validates each config first). The tune's
# non-anchor rows (M=512, 1024, 2048 here) time only the best 8 of their anchors' configs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c5; mkdir -p "$o"
tiles="m64n64k128_w64x64 m64n128k128_w64x64 m64n128k128_w64x128 m64n192k128_w64x192 m64n256k128_w64x128 m128n64k128_w64x64 m128n128k128_w64x64 m128n128k128_w64x128 m128n192k128_w64x192"
cfgs=""; for t in $tiles; do for sk in 1 2 4; do cfgs+="${t}_s4_tma2_sk$sk,"; done; done
spec=""; for s in 512,3072,6144 336,3072,6144 512,4096,2048 1024,3584,512 2048,2048,2048; do spec+="$s:${cfgs%,};"; done
TUNETAB_TIME_FP8="${spec%;}" timeout ${1:-140} .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$o/time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME" "$o/time.log" | awk '{print $2, $3, $4}' | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w/_w/; s/_s4_tma2//' | sort -t= -k3 -n | awk '{print}' | sort -s -k1,1 | awk '{a[$1]=a[$1]" "$2"="$3} END {for (k in a) print k a[k]}' | cut -c1-900
grep -E "Failure" -A3 "$o/time.log" | head
tar czf "$OUT/c5.tgz" -C "$OUT" c5 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
