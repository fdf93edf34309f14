#!/usr/bin/env bash
# Session 19, call 2: call 1's ncu showed the 128-token stage 1 (m128w64, 64 rows of W, the producer gathering
# 16 KB of token rows a K block by cp.async) at 52% L2 and 36% DRAM throughput: 475 against 336 us for the 64-token
# tile. .carry_t: the stages' inputs quantized into sorted order (moe_quant_sorted, scales transposed; stage 1 writes
# its output so), so one producer thread copies W, tokens and token scales by TMA. .carry: f962422 (cp.async
# gather), the baseline, in the same call. Correctness of .carry_t first (MoeGpu.*), then the timing table for both
# (call 1's table: its config names lacked their `$`), then ncu at M=336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t.log" 2>&1
echo "MoeGpu (t) rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t.log" | head -20
E=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1   # the M=512 row's (serves 257..512)
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1   # the M=256 row's
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
G4=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1; G6=fp8_m128w64_n64x128_k128_s6_wgmma2_sk1
F6=fp8_m128w64_n64x64_k128_s6_wgmma2_sk1;  H6=fp8_m64w32_n64x128_k128_s6_wgmma2_sk1
spec="128:$S,$E,$H6;256:$S,$E,$H6,$G6;304:$E,$W,$G4,$G6,$F6,$H6;336:$E,$W,$G4,$G6,$F6,$H6;512:$E,$W,$G6,$F6;2048:$E,$G6;336,skewed:$E,$W,$G6,$F6,$H6;512,skewed:$E,$G6"
for v in carry_t carry; do
  TUNETAB_TIME_MOE="$spec" timeout 200 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"; grep -E "^TIME|FAILED|Failure" "$OUT/time_$v.log" | sed 's/ min_us.*//; s/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//' | cut -c1-200
done
for c in $E $G6; do
  TUNETAB_TIME_MOE="336:$c" timeout 60 ncu --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight .carry_t/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/sol_t_$c.txt" 2>&1
  echo "== ncu (t) $c ($((SECONDS - t0)) s)"
  grep -E "^  void|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput" "$OUT/sol_t_$c.txt" | sed 's/(Moe[A-Za-z0-9]*Args).*//' | paste - - - - - | awk '{$1=$1; print}' | cut -c1-220
done
echo "total $((SECONDS - t0)) s"
