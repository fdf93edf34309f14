#!/usr/bin/env bash
# Session 32, late: tma2 with the tile's scales in shared memory (ablate.patch mask 32: copied once a tile, coalesced,
# read in the K loop from shared memory) against the same binary at mask 0, twice each, alternating; each config is
# validated before it is timed (mask 32 must pass). Carry .carry_x (build_x.sh: main + ablate.patch, mask 32 included). ~150 s.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
w96=m128n96k128_w64x96_s4_tma2_sk1; w128=m128n128k128_w64x128_s4_tma2_sk1; n192=m64n192k128_w64x96_s4_tma2_sk1
n64=m64n64k128_w64x64_s4_tma2_sk1; n128=m64n128k128_w64x64_s4_tma2_sk1
spec="336,3072,6144:$w96,$w128,$n192,$n64;304,3072,6144:$n128;336,2624,6144:m128n64k128_w64x64_s4_tma2_sk1;256,6144,2048:$w96,$n192"
spec+=";336,4096,2048:$w96;336,3584,512:$w96;1024,4096,2048:$w128;2048,2048,2048:$w128;1024,3584,512:$w128"
for rep in 1 2; do
  for mode in 0 32; do
    TT_ABLATE=$mode TUNETAB_TIME_FP8="$spec" timeout 100 .carry_x/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
      > "$OUT/scales_${mode}_$rep.log" 2>&1
    echo "mode $mode #$rep rc=$? $((SECONDS - t0)) s"; grep -E "Failure|rel_l2" "$OUT/scales_${mode}_$rep.log" | head -4
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/scales.txt"
import re, sys, statistics
t = {}
for mode in ("0", "32"):
    for rep in (1, 2):
        try: s = open(f"{sys.argv[1]}/scales_{mode}_{rep}.log").read()
        except OSError: continue
        for x in re.finditer(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", s):
            t.setdefault((int(x[1]), int(x[2]), int(x[3]), x[4]), {}).setdefault(mode, []).append(float(x[5]))
print("us, mean of two runs: mask 0 (main's kernel) and 32 (the tile's scales in shared memory)")
rs = []
for (m, n, k, c), r in sorted(t.items()):
    a = statistics.mean(r.get("0", [float("nan")])); b = statistics.mean(r.get("32", [float("nan")]))
    rs.append(b / a)
    print(f"{m:5d} x {n:5d} x {k:5d} {c:36s} {a:8.2f} {b:8.2f} {b / a:6.3f}")
import math
print(f"geomean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}")
PY
tar czf "$OUT/scales_logs.tgz" -C "$OUT" $(cd "$OUT" && ls scales_*.log) && (cd "$OUT" && rm -f scales_*.log)
echo "total $((SECONDS - t0)) s"
