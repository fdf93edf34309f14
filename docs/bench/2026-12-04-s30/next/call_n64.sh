#!/usr/bin/env bash
# For session 31 (not run): stage-1 tiles of 64 rows of W for the 96-token MoE configs, which the space leaves out
# (session 16: 1.3x slower, before the TMA token loads and the run order). With 32 tiles a sorted block instead of 16,
# stage 1's last round of 132 CTAs is finer (performance.md, session 30, last paragraph). HEAD's binaries; one process
# per routing sample, each config side by side; then ncu of stage 1 at M=336 for both W heights.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; V=fp8_m96w96_n64x128_k128_s4_wgmma2_sk1; U=fp8_m96w96_n64x64_k128_s4_wgmma2_sk1
E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; F=fp8_m64w64_n64x256_k128_s4_wgmma2_sk1
spec=""
for m in 257 288 304 320 336 352 384 448 512 304,skewed 336,skewed 512,skewed; do spec+="$m:$W,$V,$U,$E,$F;"; done
for rep in 1 2; do
  TUNETAB_TIME_MOE="${spec%;}" timeout 200 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$rep.log" 2>&1
  echo "time #$rep rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" <<'PY' | tee "$OUT/n64.txt"
import re, sys, statistics
t = {}
for rep in (1, 2):
    for line in open(f"{sys.argv[1]}/time_{rep}.log"):
        m = re.match(r"TIME m=(\d+),.*?routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault(m[3] + "_" + m[4], {}).setdefault((int(m[1]), m[2]), []).append(float(m[5]))
keys = sorted({k for r in t.values() for k in r})
print("config                   " + " ".join(f"{k[0]:>5d}{k[1][0]}" for k in keys))
for c, r in t.items():
    print(f"{c:24s} " + " ".join(f"{statistics.mean(r[k]):6.1f}" if k in r else "     -" for k in keys))
print("(us, mean of two runs; b = balanced, s = skewed; 60% of the roofline is ~473 us at a 4.2-4.26 TB/s copy)")
PY
for c in $W $V; do
  TUNETAB_TIME_MOE="336:$c" timeout 80 ncu --clock-control none --cache-control none -k regex:moe_stage --launch-skip 4 --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed --csv \
    .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu_$c.csv" 2>&1
  echo "ncu $c rc=$? $((SECONDS - t0)) s"; grep -E '"(gpu__time_duration.sum|dram__bytes_read.sum)"' "$OUT/ncu_$c.csv" | cut -d, -f5,12- | head -8
done
echo "total $((SECONDS - t0)) s"
