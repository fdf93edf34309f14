#!/usr/bin/env bash
# Session 48, call 3: branch s48-oob (tma4: a tile whose last 64-row half lies past M copies A in 64-row boxes and
# skips those halves, their warpgroups idle; whole tiles keep one box) against main (`.carry`'s build), alternating old
# new old new, at M 304 (the last 128-row tile 48 rows: changed) for every dense FP8 key of the GLM-5 profile, and at
# 336 (80 rows: unchanged, the control); the ragged-shape test on tma4's configs with the new build; cuBLASLt.
# Outputs: ab.tgz (the four runs' logs), ragged_tma4.log, fp8_baseline.log.
#   usage: OUT=... bash docs/bench/2026-12-07-s48/call3.sh   (carry .carry_x: ab.tgz packs .carry_ab/{old,new})
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
tar xzf .carry_x/ab.tgz
t="m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n64k128_w64x64_s6_tma4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1"
spec=""
for nk in 2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048 6144,256; do spec+="304,$nk:$t;"; done
spec+="336,4096,2048:$t;336,3072,6144:$t"
mkdir -p "$OUT/ab"
for r in old1 new1 old2 new2; do
  TUNETAB_TIME_FP8="$spec" .carry_ab/${r%?}/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/ab/$r.log" 2>&1
  echo "run $r: rc=$? $(grep -c '^TIME ' "$OUT/ab/$r.log") timings; $(grep -cE 'Failure|FAILED' "$OUT/ab/$r.log") failure lines"
done
python3 - "$OUT/ab" <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
for r in ("old1", "new1", "old2", "new2"):
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(m[1], m[2], m[3], m[4])][r] = float(m[5])
logs = []
for k, v in t.items():
    if len(v) < 4: continue
    o, n = (v["old1"] + v["old2"]) / 2, (v["new1"] + v["new2"]) / 2
    logs.append(math.log(n / o))
    print(f"{'x'.join(k[:3]):>16} {k[3]:<40} old {v['old1']:.2f} {v['old2']:.2f} new {v['new1']:.2f} {v['new2']:.2f}  new/old {n / o:.3f}")
print(f"geomean new/old {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)}")
PY
tar czf "$OUT/ab.tgz" -C "$OUT" ab && rm -rf "$OUT/ab"
TUNETAB_FP8_ONLY=tma4 timeout 240 .carry_ab/new/tunetab_gpu_tests --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes > "$OUT/ragged_tma4.log" 2>&1
echo "ragged tma4 (new): rc=$?"; tail -n 2 "$OUT/ragged_tma4.log"
shapes=""
for nk in 2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048 6144,256; do shapes+="304,$nk;"; done
(cd bench && python3 fp8_baseline.py --shapes "${shapes}336,4096,2048;336,3072,6144") > "$OUT/fp8_baseline.log" 2>&1
tail -n 13 "$OUT/fp8_baseline.log"
