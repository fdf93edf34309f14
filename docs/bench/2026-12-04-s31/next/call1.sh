#!/usr/bin/env bash
# For the next session's first device call (written in session 31, which had no device): the branch s31-moe-small's
# MoE changes against main's kernels, binaries from build.sh (carry .carry_h .carry_k .carry_t .carry_p; 23 MB).
# 1. MoeGpu.* + MoeGpuConfigs.* on p (the branch's tip); on k and t as well only if p fails.
# 2. memcheck on p: the timing test's validation of four configs (skewed 336 and 257).
# 3. The pipeline timing (MoeGpu.TimeConfigs*), each binary twice, alternating: ab.txt.
# 4. ncu per kernel at M=336 (align, both quantizations, both stages, reduce) on h and p.
# About 450 s: run it as `OUT=... bash docs/bench/2026-12-04-s31/next/call1.sh` with timeout_s 600.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
check() {
  timeout 200 ".$1/tunetab_gpu_tests" --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_$1.log" 2>&1
  local rc=$?
  echo "MoeGpu $1 rc=$rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|Expected|Which is" "$OUT/moe_gpu_$1.log" | head -12
  return $rc
}
check carry_p || { check carry_k; check carry_t; }
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; G=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1
TUNETAB_TIME_MOE="336,skewed:$W,$E,$G;257:$S" timeout 150 compute-sanitizer --tool memcheck --print-limit 5 .carry_p/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/memcheck_p.log" 2>&1
echo "memcheck p rc=$? $((SECONDS - t0)) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck_p.log" | head -4
spec="16:$S;128:$S,$E;256:$E,$W;257:$E,$W;304:$E,$W;336:$E,$W;384:$E,$W;448:$E,$W;512:$E,$W;1024:$W;4096:$W"
spec+=";304,skewed:$E,$W;336,skewed:$E,$W;512,skewed:$E,$W"
# h and p also time the 96-token config with 64 rows of W a stage-1 tile (32 tiles a sorted block: a finer last
# round), which the space leaves out (session 30's next/call_n64.sh, folded in here).
V=fp8_m96w96_n64x128_k128_s4_wgmma2_sk1
spec_v="$spec;257:$V;304:$V;336:$V;384:$V;512:$V;304,skewed:$V;336,skewed:$V;512,skewed:$V"
for rep in 1 2; do
  for v in carry_h carry_k carry_t carry_p; do
    s=$spec; case $v in carry_h|carry_p) s=$spec_v ;; esac
    TUNETAB_TIME_MOE="$s" timeout 120 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_${v}_$rep.log" 2>&1
    echo "time $v #$rep rc=$? $((SECONDS - t0)) s"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys, statistics
vs = ("carry_h", "carry_k", "carry_t", "carry_p")
t = {}; bad = {}
for v in vs:
    for rep in (1, 2):
        try: s = open(f"{sys.argv[1]}/time_{v}_{rep}.log").read()
        except OSError: s = ""
        bad[v] = bad.get(v, 0) + s.count("[  FAILED  ]") + ("[  PASSED  ]" not in s)
        for m in re.finditer(r"TIME m=(\d+),.*?routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", s):
            t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {}).setdefault(v, []).append(float(m[5]))
print("   M routing  config                 h mean    k/h    t/h    p/h  %roof(p, 284 us)")
rs = {v: [] for v in vs[1:]}
for k in sorted(t):
    r = t[k]
    if "carry_h" not in r: continue
    h = statistics.mean(r["carry_h"]); line = f"{k[0]:4d} {k[1]:8s} {k[2]:20s} {h:8.1f}"
    for v in vs[1:]:
        if v in r: rs[v].append(statistics.mean(r[v]) / h); line += f"  {rs[v][-1]:.3f}"
        else: line += "      -"
    if "carry_p" in r: line += f"  {284.0 / statistics.mean(r['carry_p']) * 100:.0f}%"
    print(line)
for v, x in rs.items():
    g = math.exp(sum(map(math.log, x)) / len(x)) if x else 9
    print(f"{v}: geomean {g:.3f}, best {min(x, default=9):.3f}, worst {max(x, default=9):.3f}, failed runs {bad[v]}")
PY
for v in carry_h carry_p; do
  f="$OUT/ncu_$v.csv"
  TUNETAB_TIME_MOE="336:$E" timeout 80 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 12 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
    .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$f" 2>&1
  echo "== ncu $v rc=$? $((SECONDS - t0)) s"
  python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if rows:
    h = rows[0]; ki = h.index("Kernel Name"); ii = h.index("ID"); mi = h.index("Metric Name"); ui = h.index("Metric Unit"); vi = h.index("Metric Value")
    for r in rows[1:]:
        print(f"  {r[ii]:>3s} {r[ki][:34]:34s} {r[mi][:22]:22s} {r[vi]} {r[ui]}")
PY
done
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log ncu_*) && (cd "$OUT" && rm -f *.log ncu_*)
echo "total $((SECONDS - t0)) s"
