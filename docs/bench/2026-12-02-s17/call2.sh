#!/usr/bin/env bash
# Session 17, call 2 (call 1 ran binaries built before Config::cluster() counted wgmma2: its cluster configs ran unclustered kernels and failed): the wgmma2 MoE stages with clusters of 2 (W multicast; a CTA of padding skips its MMAs) and
# the W scales loaded a K block ahead.
#  1. MoeGpu.* (the pipeline test runs two cluster configs) and MoeGpuConfigs.*.
#  2. The MoE timing tool at M=256..512, balanced and skewed: the cluster configs against the exported rows' configs.
#  3. ncu SpeedOfLight per pipeline kernel at M=336 for the best cluster config.
#  4. If 1 passed: the profile tune, resumed, with the time left (it re-judges the re-keyed wgmma2 configs).
#   usage (on the device): bash docs/bench/2026-12-02-s17/call1.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
t0=$SECONDS
o=$OUT/c2; mkdir -p "$o"
timeout 240 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*' > "$o/moe_tests.log" 2>&1
trc=$?; echo "MoeGpu.* rc=$trc $((SECONDS - t0)) s"; grep -E "^\[ +(OK|FAILED|PASSED) |Failure" "$o/moe_tests.log" | head -20
grep -E "Failure" -A6 "$o/moe_tests.log" | head -30
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
P4=fp8_m128w64_n128x256_k128_s4_wgmma2_sk1; P3=fp8_m128w64_n128x256_k128_s3_wgmma2_sk1
Q4=fp8_m128w64_n128x128_k128_s4_wgmma2_sk1; R=fp8_m64w32_n256x128_k128_s3_wgmma2_sk1
spec="256:$S,$R,$P4;304:$E,$W,$P4,$P3,$Q4;336:$E,$W,$P4,$P3,$Q4,$R;512:$E,$P4,$P3,$Q4;336,skewed:$E,$W,$P4,$Q4;512,skewed:$E,$P4"
TUNETAB_TIME_MOE="$spec" timeout 200 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "Failure" -A3 "$o/time.log" | head
grep -E "^TIME" "$o/time.log" | awk '{print $2, $3, $4}' | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//; s/_k128//; s/_wgmma2_sk1//'
TUNETAB_TIME_MOE="336:$P4" timeout 40 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > $o/sol_P4.txt 2>&1
echo "sol rc=$? $((SECONDS - t0)) s"
grep -E "^  void|^  moe|Duration|DRAM Throughput|L2 Cache Throughput" $o/sol_P4.txt | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - | awk '{$1=$1; print}' | cut -c1-200
if [ $trc = 0 ] && [ "${TUNE:-0}" = 1 ]; then
  left=$(( total - (SECONDS - t0) - 25 ))
  BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"
  grep -E "rc=|skewed|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-150 | tail -30
fi
tar czf "$OUT/c2.tgz" -C "$OUT" c2 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
