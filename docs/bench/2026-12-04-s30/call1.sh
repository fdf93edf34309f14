#!/usr/bin/env bash
# Session 30, call 1. .carry = HEAD (5659444); .carry_p = HEAD + docs/bench/2026-12-04-s29/next/tma2_scale_prefetch.patch
# (tma2's consumers load each K block's scales one K block ahead). A/B of tma2 configs at the shapes where the dense
# FP8 rows miss cuBLASLt, twice each, alternating binaries; then the profile tune from runs/glm5.db.gz (resumable)
# on the winner's binary: the MoE key re-times eight finalists over nine Ms.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
spec="336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk1,m64n128k128_w64x64_s4_tma2_sk1"
spec+=";1024,4096,2048:m128n128k128_w64x128_s4_tma2_p132_sk1,m128n192k128_w64x192_s4_tma2_sk1"
spec+=";2048,512,6144:m64n64k128_w64x64_s4_tma2_sk2,m128n128k128_w64x128_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk2,m128n64k128_w64x64_s4_tma2_sk2"
spec+=";2048,3072,6144:m128n192k128_w64x192_s4_tma2_sk1;4096,2624,6144:m128n192k128_w64x192_s4_tma2_sk1"
for rep in 1 2; do
  for v in carry carry_p; do
    TUNETAB_TIME_FP8="$spec" timeout 120 .$v/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time_${v}_$rep.log" 2>&1
    echo "time $v #$rep rc=$? $((SECONDS - t0)) s"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys, statistics
t = {}; fails = 0
for v in ("carry", "carry_p"):
    for rep in (1, 2):
        s = open(f"{sys.argv[1]}/time_{v}_{rep}.log").read()
        fails += s.count("[  FAILED  ]") + ("[  PASSED  ]" not in s)
        for m in re.finditer(r"TIME (\S+) (\S+) median_us=([\d.]+)", s):
            t.setdefault((m[1], m[2]), {}).setdefault(v, []).append(float(m[3]))
rs = []
print("shape / config                                              HEAD (runs 1, 2)    prefetch (runs 1, 2)  prefetch/HEAD")
for k in sorted(t):
    r = t[k]
    line = f"{k[0][:28]:28s} {k[1][:34]:34s}" + "".join(f"  {' '.join(f'{x:8.2f}' for x in r.get(v, []))}" for v in ("carry", "carry_p"))
    if "carry" in r and "carry_p" in r:
        rs.append(statistics.mean(r["carry_p"]) / statistics.mean(r["carry"])); line += f"  {rs[-1]:.3f}"
    print(line)
g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else 9.0
print(f"prefetch: geomean {g:.3f}, best {min(rs, default=9):.3f}, worst {max(rs, default=9):.3f}, failed runs {fails}")
print("WIN=1" if fails == 0 and g <= 0.99 and max(rs) <= 1.03 else "WIN=0")
PY
bin=.carry; grep -q "^WIN=1" "$OUT/ab.txt" && bin=.carry_p
rm -f build/glm5.db
BIN=$bin BUDGET_S=$(( ${TOTAL_S:-585} - (SECONDS - t0) )) bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune ($bin) rc=$? $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls time_*.log) && (cd "$OUT" && rm -f time_*.log)
echo "total $((SECONDS - t0)) s"
