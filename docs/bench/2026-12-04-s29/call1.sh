#!/usr/bin/env bash
# Session 29, call 1. Candidate (.carry): wgmma2 stage 1 quantizes its own output where a tile's rows of W are whole
# 1x128 groups (n1 128 or 256: no second moe_quant_sorted launch, no bf16 inter written and read again), and
# moe_quant_sorted skips padding rows. .carry_b = 24110e4 (HEAD). MoE GPU tests on the candidate, both binaries'
# pipeline timings twice in this call (A B A B), ncu per-kernel time and DRAM bytes at M=336 for both, then the
# profile tune from runs/glm5.db.gz with what is left of the call (resumable).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
echo "MoeGpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu.log" | head -8
E3=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; G=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1
spec="128:$S,$E3;256:$S,$W;304:$E3,$W,$G;336:$E3,$W,$G;384:$E3,$W;512:$E3,$W;1024:$W;2048:$W;4096:$W;304,skewed:$E3,$W;336,skewed:$E3,$W;512,skewed:$E3"
for rep in 1 2; do
  for v in carry carry_b; do
    TUNETAB_TIME_MOE="$spec" timeout 150 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_${v}_$rep.log" 2>&1
    echo "time $v #$rep rc=$? $((SECONDS - t0)) s"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys, statistics
t = {}
for v in ("carry", "carry_b"):
    for rep in (1, 2):
        for line in open(f"{sys.argv[1]}/time_{v}_{rep}.log"):
            m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
            if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {}).setdefault(v, []).append(float(m[5]))
rs = []
print("   M routing  config               new (runs 1, 2)     HEAD (runs 1, 2)    new/HEAD (mean of each)")
for k in sorted(t):
    r = t[k]
    line = f"{k[0]:4d} {k[1]:8s} {k[2]:20s}" + "".join(f"  {' '.join(f'{x:8.1f}' for x in r.get(v, []))}" for v in ("carry", "carry_b"))
    if "carry" in r and "carry_b" in r:
        rs.append(statistics.mean(r["carry"]) / statistics.mean(r["carry_b"])); line += f"  {rs[-1]:.3f}"
    print(line)
log = open(f"{sys.argv[1]}/moe_gpu.log").read()
ok = "PASSED" in log and "FAILED" not in log
g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else 9.0
print(f"candidate: geomean {g:.3f}, best {min(rs, default=9):.3f}, worst {max(rs, default=9):.3f}, tests {'ok' if ok else 'FAILED'}")
print("WIN=1" if ok and g <= 0.995 and max(rs) <= 1.03 else "WIN=0")
PY
for v in carry carry_b; do
  for mc in 336:$E3 336:$W; do
    f="$OUT/ncu_${v}_${mc%%:*}_${mc#*:}.csv"
    TUNETAB_TIME_MOE="$mc" timeout 60 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 12 --launch-count 6 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
      .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$f" 2>&1
    echo "== ncu $v $mc rc=$? $((SECONDS - t0)) s"
    python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ki = h.index("Kernel Name"); ii = h.index("ID"); mi = h.index("Metric Name"); ui = h.index("Metric Unit"); vi = h.index("Metric Value")
for r in rows[1:]:
    print(f"  {r[ii]:>3s} {r[ki][:34]:34s} {r[mi][:22]:22s} {r[vi]} {r[ui]}")
PY
  done
done
if grep -q "^WIN=1" "$OUT/ab.txt"; then
  rm -f build/glm5.db
  left=$(( ${TOTAL_S:-580} - (SECONDS - t0) ))
  BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
fi
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls moe_gpu.log time_*.log ncu_*) && (cd "$OUT" && rm -f moe_gpu.log time_*.log ncu_*)
echo "total $((SECONDS - t0)) s"
