#!/usr/bin/env bash
# Session 28, call 1. Candidate (.carry): moe_stage_wgmma2's tiles in block-major order (a sorted block's rows of W
# consecutive, so the CTAs of a round read each block's tokens together) instead of blocks fastest; .carry_b =
# dbbcb7c (HEAD). MoE GPU tests on the candidate, both binaries' pipeline timings in this call, ncu (DRAM bytes per
# kernel) on the candidate at M=336 / 512, then, if the candidate wins, the profile tune from runs/glm5.db.gz (the
# wgmma2 MoE rows are re-keyed and re-judged), resumable; else cuBLASLt's kernels for the missed dense shapes (ncu).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
echo "MoeGpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu.log" | head -8
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="128:$S,$E4;256:$S,$E4;257:$E4,$W;304:$E4,$W;336:$E4,$W;384:$E4,$W;512:$E4,$W;1024:$E4,$W;2048:$E4,$W;4096:$W;336,skewed:$E4,$W;512,skewed:$E4,$W"
for v in carry carry_b; do
  TUNETAB_TIME_MOE="$spec" timeout 150 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys
t = {}
for v in ("carry", "carry_b"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
rs = []
for k in sorted(t):
    r = t[k]
    line = f"{k[0]:4d} {k[1]:8s} {k[2]:20s}" + "".join(f" {v} {r[v]:8.1f}" if v in r else f" {v}        -" for v in ("carry", "carry_b"))
    if len(r) == 2:
        rs.append(r["carry"] / r["carry_b"]); line += f"  new/b {rs[-1]:.3f}"
    print(line)
log = open(f"{sys.argv[1]}/moe_gpu.log").read()
ok = "PASSED" in log and "FAILED" not in log
g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else 9.0
print(f"candidate: geomean {g:.3f}, best {min(rs, default=9):.3f}, worst {max(rs, default=9):.3f}, tests {'ok' if ok else 'FAILED'}")
print("WIN=1" if ok and g <= 0.99 and max(rs) <= 1.03 else "WIN=0")
PY
for mc in 336:$W 512:$E4 512:$W; do
  TUNETAB_TIME_MOE="$mc" timeout 60 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 6 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv \
    .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/ncu_${mc%%:*}_${mc#*:}.csv" 2>&1
  echo "== ncu $mc (.carry) rc=$? $((SECONDS - t0)) s"
  python3 - "$OUT/ncu_${mc%%:*}_${mc#*:}.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); ui = h.index("Metric Unit"); vi = h.index("Metric Value")
for r in rows[1:]:
    print(f"  {r[ki][:40]:40s} {r[mi][:24]:24s} {r[vi]} {r[ui]}")
PY
done
if grep -q "^WIN=1" "$OUT/ab.txt"; then
  rm -f build/glm5.db
  left=$(( ${TOTAL_S:-585} - (SECONDS - t0) ))
  BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
else
  shapes="336,3072,6144;336,4096,2048;256,6144,2048;256,6144,1536;336,3584,512;336,2624,6144;1024,4096,2048;2048,2048,2048;4096,512,6144;1024,3584,512"
  timeout 120 ncu --profile-from-start off --section LaunchStats --section SpeedOfLight \
    python3 docs/bench/2026-12-04-s28/ncu_scaled_mm.py "$shapes" > "$OUT/ncu_cublas.txt" 2>&1
  echo "ncu cublas rc=$? $((SECONDS - t0)) s"
  grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared|Compute \(SM\) Thr|Memory Thr" "$OUT/ncu_cublas.txt" | head -150
fi
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls moe_gpu.log time_*.log ncu_*) && (cd "$OUT" && rm -f moe_gpu.log time_*.log ncu_*)
echo "total $((SECONDS - t0)) s"
