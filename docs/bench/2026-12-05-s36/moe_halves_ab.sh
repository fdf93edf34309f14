#!/usr/bin/env bash
# A/B of branch s36-moe-halves (96-token wgmma2 tiles with a 256-row stage 2: fp8_m96w96_n128x256_*, a consumer
# warpgroup on two adjacent 128-row halves) against main. Carries .carry (main) and .carry_h (the branch's
# tunetab_gpu_tests).
# 1. MoeGpu.* + MoeGpuConfigs.* on the branch (every config, the new ones included, against the CPU reference).
# 2. The pipeline timed (MoeGpu.TimeConfigs*), each binary twice, alternating: main's 257..512 row (m64w64_n128x256_s4)
#    and m96w96_n128x128_s4 on main; the new tiles and m96w96_n128x128_s4 (its kernel's text changed) on the branch; at
#    the nine Ms the tune times the 257..512 row at (balanced), 304, 336 and 1024, and 304 / 336 / 512 skewed.
#   usage: OUT=... bash docs/bench/2026-12-05-s36/moe_halves_ab.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-570}
timeout 220 .carry_h/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_h.log" 2>&1
echo "MoeGpu branch rc=$? $((SECONDS - t0)) s"
grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|Expected|Which is" "$OUT/moe_gpu_h.log" | head -12
m64=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; m96=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
h3=fp8_m96w96_n128x256_k128_s3_wgmma2_sk1; h4=fp8_m96w96_n128x256_k128_s4_wgmma2_sk1
spec() {  # spec CONFIGS
  local s="" m
  for m in 257 288 304 320 336 352 384 416 448 480 512 1024; do s+="$m:$1;"; done
  for m in 304 336 512; do s+="$m,skewed:$1;"; done
  echo "${s%;}"
}
for rep in 1 2; do
  for v in main h; do
    left=$((total - (SECONDS - t0)))
    [ $left -lt 40 ] && break 2
    if [ $v = main ]; then bin=.carry s=$(spec "$m64,$m96"); else bin=.carry_h s=$(spec "$h3,$h4,$m96"); fi
    TUNETAB_TIME_MOE="$s" timeout $((left - 10)) $bin/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_${v}_$rep.log" 2>&1
    echo "time $v #$rep rc=$? $((SECONDS - t0)) s"; grep -E "Failure|rel_l2" "$OUT/time_${v}_$rep.log" | head -3
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import re, sys, statistics
t = {}
for v in ("main", "h"):
    for rep in (1, 2):
        try: s = open(f"{sys.argv[1]}/time_{v}_{rep}.log").read()
        except OSError: continue
        for x in re.finditer(r"TIME m=(\d+),\S*routing=(\w+) fp8_(\S+)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", s):
            t.setdefault((int(x[1]), x[2]), {}).setdefault(f"{v}:{x[3]}_{x[4]}", []).append(float(x[5]))
cols = ["main:m64w64_n128x256_s4", "main:m96w96_n128x128_s4", "h:m96w96_n128x128_s4", "h:m96w96_n128x256_s3", "h:m96w96_n128x256_s4"]
print("us, mean of the runs (main = .carry, h = s36-moe-halves); last column: the best new tile / main's row (m64w64_s4)")
print(f"{'M':>5} {'routing':8} " + " ".join(f"{c:>24}" for c in cols) + "   new/row")
bucket = [257, 288, 320, 352, 384, 416, 448, 480, 512]
sums = {c: [] for c in cols}
for (m, r) in sorted(t):
    row = t[(m, r)]
    v = [statistics.mean(row[c]) if c in row else float("nan") for c in cols]
    best_new = min((x for x in v[3:] if x == x), default=float("nan"))
    print(f"{m:5d} {r:8} " + " ".join(f"{x:24.1f}" for x in v) + f"   {best_new / v[0]:.3f}")
    if r == "balanced" and m in bucket:
        for c, x in zip(cols, v): sums[c].append(x)
print("\nmean over the 257..512 row's nine Ms (balanced), as the tune ranks it:")
for c in cols:
    if len(sums[c]) == len(bucket): print(f"  {c:26} {statistics.mean(sums[c]):8.1f} us")
PY
echo "total $((SECONDS - t0)) s"
