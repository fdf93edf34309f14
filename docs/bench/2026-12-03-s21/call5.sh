#!/usr/bin/env bash
# Session 21, call 5: where the 96-token tiles lose to the 64-token ones at M 384-512 (the M=512 row serves 257..512
# and takes m64 by its mean; m96 is faster at 257-336). ncu per kernel on a15f22c's binary (.carry_q), both configs,
# M=384 and 512 balanced.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
for m in 384 512; do for c in $W $E4; do
  TUNETAB_TIME_MOE="$m:$c" timeout 60 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 6 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed --csv \
    .carry_q/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu_${m}_$c.csv" 2>&1
  echo "== ncu $m $c rc=$? $((SECONDS - t0)) s"
  python3 - "$OUT/ncu_${m}_$c.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value")
for r in rows[1:]:
    print(f"  {r[ki][:40]:40s} {r[mi][:34]:34s} {r[vi]}")
PY
done; done
tar czf "$OUT/ncu.tgz" -C "$OUT" $(cd "$OUT" && ls ncu_*.csv) && rm -f "$OUT"/ncu_*.csv
echo "total $((SECONDS - t0)) s"
