#!/usr/bin/env bash
# Session 21, call 1. .carry_b = c87f860 (HEAD). .carry = HEAD + moe_quant_sorted persistent (a warp per (row, two
# groups) at a time, kBatch loads in flight, hardware e4m3 conversion) + the wgmma2 stages' narrow MMAs on a token
# group's last columns (32, 64 or the full width, up to its last valid token). Correctness, then both binaries'
# pipeline timings in this call, ncu per kernel at M=336, then (if the candidate passed and won) the profile tune
# from session 17's database with the call's remaining time (resumable) and, time left, the MoE benchmark half.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
moe_rc=$?
echo "MoeGpu rc=$moe_rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu.log" | head -20
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
G=fp8_m128w64_n64x128_k128_s6_wgmma2_sk1
spec="128:$S,$E4;256:$S,$E4;257:$E4,$W;304:$E4,$W;336:$E4,$W,$G;384:$E4,$W;512:$E4,$W,$G;1024:$E4,$W;336,skewed:$E4,$W;512,skewed:$E4,$W"
for v in carry carry_b; do
  TUNETAB_TIME_MOE="$spec" timeout 120 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" "$moe_rc" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys
t = {}
for v in ("carry", "carry_b"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
ratios = []
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    ratio = r["carry"] / r["carry_b"] if len(r) == 2 else float("nan")
    ratios.append(ratio)
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:20s} new {f('carry')} base {f('carry_b')} new/base {ratio:.3f}")
ok = sys.argv[2] == "0" and ratios and all(x <= 1.02 for x in ratios) and math.exp(sum(map(math.log, ratios)) / len(ratios)) <= 0.99
print("geomean %.3f" % math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else "no ratios")
print("BIN=.carry" if ok else "BIN=none")
PY
for c in $W $E4; do
  TUNETAB_TIME_MOE="336:$c" timeout 60 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 6 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed --csv \
    .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu336_$c.csv" 2>&1
  echo "== ncu 336 $c rc=$? $((SECONDS - t0)) s"
  python3 - "$OUT/ncu336_$c.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value")
for r in rows[1:]:
    print(f"  {r[ki][:60]:60s} {r[mi][:45]:45s} {r[vi]}")
PY
done
bin=$(tail -n 1 "$OUT/ab.txt" | cut -d= -f2)
if [ "$bin" = ".carry" ]; then
  rm -f build/glm5.db
  left=$(( ${TOTAL_S:-575} - (SECONDS - t0) ))
  BIN=$bin BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune ($bin) rc=$? $((SECONDS - t0)) s"; grep -A15 "^\[14/14\]" "$OUT/glm5.tune.log" | cut -c1-220; tail -n 4 "$OUT/glm5.tune.log" | cut -c1-200
fi
tar czf "$OUT/logs.tgz" -C "$OUT" moe_gpu.log time_carry.log time_carry_b.log $(cd "$OUT" && ls ncu336_*.csv) && rm -f "$OUT"/moe_gpu.log "$OUT"/time_carry*.log "$OUT"/ncu336_*.csv
echo "total $((SECONDS - t0)) s"
