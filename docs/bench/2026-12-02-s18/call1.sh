#!/usr/bin/env bash
# Session 18, call 1: the wgmma2 consumers' K blocks in two MMA groups, software-pipelined over pairs of K blocks
# (each group's promotion overlaps the next group's MMA; stage 1's groups are its gate and up halves, stage 2's the
# halves of the token columns). .carry_nc holds HEAD's binaries (84dd78b: one wgmma_wait<0> then the promotion a K
# block), .carry_new the candidate.
#  1. MoeGpu.* and MoeGpuConfigs.* on the candidate.
#  2. The MoE timing tool, both binaries, the wgmma2 configs at M 16..2048, balanced and skewed.
#  3. ncu's per-kernel durations of the exported M=512 row's config at 336, both binaries.
#  4. If 1 passed, the candidate was faster on that config at 304 + 336 + 512 and TUNE=1: the profile tune, resumed.
#   usage (on the device): TUNE=0|1 bash docs/bench/2026-12-02-s18/call1.sh [TOTAL_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
t0=$SECONDS
o=$OUT/c1; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv > "$o/smi.txt" 2>&1
timeout 240 .carry_new/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*' > "$o/moe_tests.log" 2>&1
trc=$?; echo "MoeGpu.* rc=$trc $((SECONDS - t0)) s"; grep -E "^\[ +(FAILED|PASSED) |Failure" "$o/moe_tests.log" | head -20
grep -E "Failure" -A6 "$o/moe_tests.log" | head -20
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; E3=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1; E5=fp8_m64w64_n128x256_k128_s5_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; W3=fp8_m96w96_n128x128_k128_s3_wgmma2_sk1; V=fp8_m96w96_n128x64_k128_s4_wgmma2_sk1
spec="16:$S;64:$S;128:$E,$S;256:$S,$W;304:$E,$W;336:$E,$E3,$E5,$W,$W3,$V;512:$E,$E3,$W;1024:$E3;2048:$E;128,skewed:$E,$S;336,skewed:$E,$W"
for v in nc new; do
  TUNETAB_TIME_MOE="$spec" timeout 150 .carry_$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$o" <<'PY'
import re, sys
t = {}
for v in ("nc", "new"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((m[2], int(m[1]), m[3] + "_" + m[4]), {})[v] = float(m[5])
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    ratio = f"{r['new'] / r['nc']:.3f}" if len(r) == 2 else "-"
    print(f"{k[1]:5d} {k[0]:8s} {k[2]:22s} nc {f('nc')} new {f('new')} new/nc {ratio}")
PY
for v in nc new; do
  TUNETAB_TIME_MOE="336:$E" timeout 40 ncu --clock-control none -k regex:moe_ -c 6 --section SpeedOfLight .carry_$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > $o/sol_$v.txt 2>&1
  echo "sol $v rc=$? $((SECONDS - t0)) s"
  grep -E "^  void|^  moe|Duration|DRAM Throughput|Compute \(SM\) Throughput" $o/sol_$v.txt | sed 's/(Moe[A-Za-z]*Args).*//' | paste - - - - | awk '{$1=$1; print}' | cut -c1-200
done
better=$(python3 - "$o" <<'PY'
import re, sys
s = {}
for v in ("nc", "new"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(304|336|512),.*routing=balanced fp8_m64w64_n128x256_k128_s4_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: s[v] = s.get(v, 0.0) + float(m[2])
print(1 if len(s) == 2 and s["new"] < s["nc"] else 0)
PY
)
echo "candidate faster at 304+336+512: $better"
if [ $trc = 0 ] && [ "${TUNE:-0}" = 1 ] && [ "$better" = 1 ]; then
  left=$(( total - (SECONDS - t0) - 25 ))
  BIN=.carry_new BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"
  grep -E "rc=|skewed|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-150 | tail -30
fi
tar czf "$OUT/c1.tgz" -C "$OUT" c1 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
