#!/usr/bin/env bash
# Session 20, call 1: session 19's call 3 (never ran: the device refused), without its tune, plus a per-kernel
# breakdown. .carry_t2 = e1e5a57 re-applied on 7922c4c (the producer's thread 0 never waits on a tile's metadata;
# warps 1-3 publish it on meta_full), .carry_t = a230191's kernels (HEAD: tokens by TMA from sorted inputs),
# .carry = f962422 (the cp.async gather). Correctness of t2, the timing table of all three in one call, then ncu
# per kernel of one pipeline iteration at M=128 and 336 for t and the gather: which kernel regressed at small M.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t2/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t2.log" 2>&1
echo "MoeGpu (t2) rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t2.log" | head -20
E=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1; E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="128:$S,$E4;256:$S,$E;304:$E4,$W;336:$E4,$W;512:$E4,$W;256,skewed:$S;336,skewed:$E4,$W"
for v in carry_t2 carry_t carry; do
  TUNETAB_TIME_MOE="$spec" timeout 120 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" > "$OUT/decide.txt" <<'PY'
import re, sys
t = {}
for v in ("carry_t2", "carry_t", "carry"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
ok = True
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:20s} t2 {f('carry_t2')} t {f('carry_t')} gather {f('carry')}")
    if "carry_t2" not in r: ok = False; continue
    ref = r.get("carry") if k[0] <= 256 else r.get("carry_t")
    if ref and r["carry_t2"] > 1.02 * ref: ok = False
print("TUNE" if ok else "NO-TUNE")
PY
cat "$OUT/decide.txt"
# Per kernel, one pipeline iteration after the validation's (--launch-skip 6): which kernel the sorted inputs made
# slower at M=128, and where the time goes at 336. Caches as the timing loop leaves them, clocks as they run.
for v in carry_t carry; do
  for mc in "128:$S" "336:$E4" "336:$W"; do
    TUNETAB_TIME_MOE="$mc" timeout 90 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 6 --launch-count 6 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum --csv --print-units base \
      .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu_${v}_${mc%%:*}_${mc#*_}.csv" 2>&1
    echo "ncu $v $mc rc=$? $((SECONDS - t0)) s"
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, io, os, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/ncu_*.csv")):
    lines = open(f).read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None: print(os.path.basename(f), "no data"); continue
    rows = {}
    for r in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        k = (r["ID"], r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "").replace("tt::", ""))
        rows.setdefault(k, {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    print(os.path.basename(f))
    tot = 0
    for (i, name), m in sorted(rows.items(), key=lambda x: int(x[0][0])):
        us = m.get("gpu__time_duration.sum", 0) / 1e3; tot += us
        print(f"  {name:22s} {us:8.1f} us  dram r {m.get('dram__bytes_read.sum',0)/1e6:7.1f} w {m.get('dram__bytes_write.sum',0)/1e6:6.1f} MB  L2 {m.get('lts__t_bytes.sum',0)/1e6:7.1f} MB")
    print(f"  total {tot:.1f} us")
PY
echo "total $((SECONDS - t0)) s"
