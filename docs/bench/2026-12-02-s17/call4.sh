#!/usr/bin/env bash
# Session 17, call 4: the wgmma2 consumers' descriptors made warp-uniform (moe_mma_kblock_desc), A/B in one call
# against the binaries of call 2 (.carry_base: clusters + W scales a K block ahead, descriptors from addresses) and of
# session 16 (.carry_s16, 8d3d2d0); .carry holds e56d843's (clusters + descriptors), .carry_nc 0936598's + the
# wgmma name fix (clusters reverted, descriptors kept: the candidate, tested and tuned here).
# Call 3's source counters: the 64-token stage 1 issues 251 instructions a consumer warp a K block (64 FFMA, 32 FMUL,
# 8 QGMMA, 32 R2UR and ~80 integer ops) and is issue-bound.
#  1. The consumer loop's SASS, old and new (cuobjdump of both headers' stage kernels, built on the CPU machine).
#  2. MoeGpu.* and MoeGpuConfigs.* on the new binaries.
#  3. The MoE timing tool, both binaries, M=304/336/512 balanced and 336 skewed.
#  4. If 2 passed and TUNE=1: the profile tune, resumed, with the time left.
#   usage (on the device): TUNE=0|1 bash docs/bench/2026-12-02-s17/call4.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
t0=$SECONDS
o=$OUT/c4; mkdir -p "$o"
for v in old new; do
  cuobjdump -sass .carry/k_$v.cubin > "$o/k_$v.sass" 2>&1 || /usr/local/cuda/bin/cuobjdump -sass .carry/k_$v.cubin > "$o/k_$v.sass" 2>&1
  echo "sass $v: $(grep -c QGMMA "$o/k_$v.sass") QGMMA, $(grep -c R2UR "$o/k_$v.sass") R2UR, $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$o/k_$v.sass") instructions"
done
timeout 240 .carry_nc/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*' > "$o/moe_tests.log" 2>&1
trc=$?; echo "MoeGpu.* rc=$trc $((SECONDS - t0)) s"; grep -E "^\[ +(FAILED|PASSED) |Failure" "$o/moe_tests.log" | head -20
grep -E "Failure" -A6 "$o/moe_tests.log" | head -20
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; P4=fp8_m128w64_n128x256_k128_s4_wgmma2_sk1
# Five stages (outside the space, which has 3 and 4): does a deeper ring help the 64-token stages?
E5=fp8_m64w64_n128x256_k128_s5_wgmma2_sk1; P5=fp8_m128w64_n128x256_k128_s5_wgmma2_sk1
spec="256:$S,$P4;304:$E,$E5,$W,$P4,$P5;336:$E,$E5,$W,$P4,$P5;512:$E,$E5,$W,$P4;336,skewed:$E,$W,$P4"
# Three binaries: session 16's (.carry_s16, 8d3d2d0: the exported tables' kernels), call 2's (.carry_base) and these.
for v in s16 base new nc; do
  bin=.carry/tunetab_gpu_tests; [ $v = base ] && bin=.carry_base/tunetab_gpu_tests; [ $v = s16 ] && bin=.carry_s16/tunetab_gpu_tests
  [ $v = nc ] && bin=.carry_nc/tunetab_gpu_tests
  TUNETAB_TIME_MOE="$spec" timeout 200 $bin --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$o" <<'PY'
import re, sys
t = {}
for v in ("s16", "base", "new", "nc"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    ratio = f"{r['nc'] / r['s16']:.3f}" if "s16" in r and "nc" in r else "-"
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:24s} s16 {f('s16')} base {f('base')} new {f('new')} nc {f('nc')} nc/s16 {ratio}")
PY
TUNETAB_TIME_MOE="336:$E" timeout 40 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight .carry_nc/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > $o/sol_E.txt 2>&1
echo "sol rc=$? $((SECONDS - t0)) s"
grep -E "^  void|^  moe|Duration|DRAM Throughput|L2 Cache Throughput" $o/sol_E.txt | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - | awk '{$1=$1; print}' | cut -c1-200
# The tune only if the candidate beat session 16's kernels on the exported M=512 row's config at 304 + 336 + 512.
better=$(python3 - "$o" <<'PY'
import re, sys
s = {}
for v in ("s16", "nc"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(304|336|512),.*routing=balanced fp8_m64w64_n128x256_k128_s4_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: s[v] = s.get(v, 0.0) + float(m[2])
print(1 if len(s) == 2 and s["nc"] < s["s16"] else 0)
PY
)
echo "candidate faster than session 16 at 304+336+512: $better"
if [ $trc = 0 ] && [ "${TUNE:-0}" = 1 ] && [ "$better" = 1 ]; then
  left=$(( total - (SECONDS - t0) - 25 ))
  BIN=.carry_nc BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"
  grep -E "rc=|skewed|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-150 | tail -30
fi
tar czf "$OUT/c4.tgz" -C "$OUT" c4 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
