#!/usr/bin/env bash
# Session 16, call 1 (binaries of e096595): the first GPU run of session 15's compile-only changes, and the
# measurements that choose this session's MoE work.
#  1. GemmFp8Gpu.* (tma2's new split-K finish, ModuleCache's parallel precompile, the ragged test's tma2 split-K
#     configs) and MoeGpu.PipelineMatchesReferenceAcrossMRoutingAndDtype (the new 96 x 64 x 128 wgmma2 tile).
#  2. The MoE timing tool: every 96-token wgmma2 tile against the exported M=512 row, at 304, 336 and 512 (balanced)
#     and 336 skewed.
#  3. ncu SpeedOfLight per pipeline kernel at M=336 (balanced): the exported row and two 96-token tiles.
#  4. The FP8 timing tool: tma2 at split-K 1, 2, 4 (the new finish) on the missed 304/336 shapes.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
bin=.carry
o=$OUT/c1; mkdir -p "$o"
timeout 330 $bin/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*' > "$o/fp8_tests.log" 2>&1
echo "GemmFp8Gpu.* rc=$? $((SECONDS - t0)) s"; grep -E "^\[ +(OK|FAILED|PASSED) |Failure" "$o/fp8_tests.log" | head -20
timeout 200 $bin/tunetab_gpu_tests --gtest_filter='MoeGpu.PipelineMatchesReferenceAcrossMRoutingAndDtype' > "$o/moe_test.log" 2>&1
echo "MoeGpu pipeline rc=$? $((SECONDS - t0)) s"; grep -E "^\[ +(OK|FAILED|PASSED) |Failure" "$o/moe_test.log" | head -20
cfgs=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1
for t in 128x64 128x128 64x64 64x128; do for s in 3 4; do cfgs+=",fp8_m96w96_n${t}_k128_s${s}_wgmma2_sk1"; done; done
TUNETAB_TIME_MOE="304:$cfgs;336:$cfgs;512:$cfgs;336,skewed:$cfgs" timeout 200 $bin/tunetab_gpu_tests \
  --gtest_filter='MoeGpu.TimeConfigs*' > "$o/moe_time.log" 2>&1
echo "moe time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME" "$o/moe_time.log" | awk '{print $2, $3, $4}' | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//; s/_k128//; s/_wgmma2_sk1//'
grep -E "Failure" -A3 "$o/moe_time.log" | head
for cfg in fp8_m64w64_n128x256_k128_s3_wgmma2_sk1 fp8_m96w96_n128x128_k128_s4_wgmma2_sk1 fp8_m96w96_n64x64_k128_s4_wgmma2_sk1; do
  TUNETAB_TIME_MOE="336:$cfg" timeout 60 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight \
    $bin/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/sol_$cfg.txt" 2>&1
  echo "sol $cfg rc=$? $((SECONDS - t0)) s"
  grep -E "^  void|^  moe|Duration|DRAM Throughput|L2 Cache Throughput" "$o/sol_$cfg.txt" | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - | awk '{$1=$1; print}' | cut -c1-220
done
cfgs=""; for t in m64n64k128_w64x64 m64n128k128_w64x64 m128n64k128_w64x64 m128n128k128_w64x128; do for sk in 1 2 4; do cfgs+="${t}_s4_tma2_sk$sk,"; done; done
spec=""; for s in 336,3072,6144 336,2624,6144 336,4096,2048 512,3072,6144 1024,3584,512; do spec+="$s:${cfgs%,};"; done
TUNETAB_TIME_FP8="${spec%;}" timeout 120 $bin/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$o/fp8_time.log" 2>&1
echo "fp8 time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME" "$o/fp8_time.log" | awk '{print $2, $3, $4}' | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w/_w/; s/_s4_tma2//' | sort -s -k1,1 | awk '{a[$1]=a[$1]" "$2"="$3} END {for (k in a) print k a[k]}' | cut -c1-900
grep -E "Failure" -A3 "$o/fp8_time.log" | head
tar czf "$OUT/c1.tgz" -C "$OUT" c1 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
