#!/usr/bin/env bash
# Session 30, call 2: narrower MMAs for the padded tail of a sorted block in the wgmma2 MoE stages. The producer's
# metadata warps find a tile's last slot; the consumers wait for it before their K loop and multiply only the first
# multiple of 32 columns that holds every token (a second token group holding none skips its MMAs).
#   .carry    = HEAD (5659444)
#   .carry_n1 = the width chosen each K block (one wgmma width per branch; ptxas: C7511 serializes the wgmmas in
#               4 of 8 instances, no spills)
#   .carry_n2 = the width chosen once per tile, the K loop instantiated per width (C7511 in 3, spills of 4-24 B)
# MoE GPU tests on both candidates, memcheck on n1, then the pipeline timing, each binary twice (alternating).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
for v in carry_n1 carry_n2; do
  timeout 150 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_$v.log" 2>&1
  echo "MoeGpu $v rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_$v.log" | head -6
done
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; E=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; G=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1
TUNETAB_TIME_MOE="336,skewed:$W,$E,$G;257:$S" timeout 120 compute-sanitizer --tool memcheck --print-limit 5 .carry_n1/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/memcheck_n1.log" 2>&1
echo "memcheck n1 rc=$? $((SECONDS - t0)) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck_n1.log" | head -4
spec="128:$S,$E;256:$S,$E,$W;257:$E,$W;304:$E,$W;336:$E,$W;384:$E,$W;448:$E,$W;512:$E,$W,$G;1024:$W;4096:$W"
spec+=";257,skewed:$E,$W;304,skewed:$E,$W;336,skewed:$E,$W;384,skewed:$E,$W;512,skewed:$E,$W,$G"
for rep in 1 2; do
  for v in carry carry_n1 carry_n2; do
    TUNETAB_TIME_MOE="$spec" timeout 150 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_${v}_$rep.log" 2>&1
    echo "time $v #$rep rc=$? $((SECONDS - t0)) s"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys, statistics
t = {}; bad = {}
for v in ("carry", "carry_n1", "carry_n2"):
    for rep in (1, 2):
        s = open(f"{sys.argv[1]}/time_{v}_{rep}.log").read()
        bad[v] = bad.get(v, 0) + s.count("[  FAILED  ]") + ("[  PASSED  ]" not in s)
        for m in re.finditer(r"TIME m=(\d+),.*?routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", s):
            t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {}).setdefault(v, []).append(float(m[5]))
print("   M routing  config               HEAD (runs 1, 2)    n1 (runs 1, 2)      n2 (runs 1, 2)     n1/HEAD n2/HEAD  %roof(n1)")
rs = {"carry_n1": [], "carry_n2": []}
for k in sorted(t):
    r = t[k]
    line = f"{k[0]:4d} {k[1]:8s} {k[2]:20s}" + "".join(f"  {' '.join(f'{x:8.1f}' for x in r.get(v, []))}" for v in ("carry", "carry_n1", "carry_n2"))
    for v in rs:
        if "carry" in r and v in r:
            rs[v].append(statistics.mean(r[v]) / statistics.mean(r["carry"])); line += f"  {rs[v][-1]:.3f}"
    if "carry_n1" in r: line += f"  {283.7 / statistics.mean(r['carry_n1']) * 100:.0f}%"
    print(line)
for v, x in rs.items():
    g = math.exp(sum(map(math.log, x)) / len(x)) if x else 9
    print(f"{v}: geomean {g:.3f}, best {min(x, default=9):.3f}, worst {max(x, default=9):.3f}, failed runs {bad[v]}")
PY
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && (cd "$OUT" && rm -f *.log)
echo "total $((SECONDS - t0)) s"
