#!/usr/bin/env bash
# Session 48, call 4: call 3 found s48-oob's whole tiles slower than main's (5-15% at K 6144, the 336 control too), as
# C's were in call 2; both gave a warpgroup past M a loop of its own. E (branch s48-oob2) drops that loop (the
# warpgroup multiplies A rows not copied; its products are never stored) and keeps the producer's change. Alternating
# old E old E on call 3's shapes (s48-oob's own were call 3's); the ragged-shape test on tma4 with E.
# Outputs: ab4.tgz (the four runs' logs), ragged_tma4_e.log.
#   usage: OUT=... bash docs/bench/2026-12-07-s48/call4.sh   (carry .carry_x: ab.tgz packs .carry_ab/{old,new,e})
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
tar xzf .carry_x/ab.tgz
t="m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n64k128_w64x64_s6_tma4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1"
spec=""
for nk in 2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048; do spec+="304,$nk:$t;"; done
spec+="336,4096,2048:$t;336,3072,6144:$t"
mkdir -p "$OUT/ab4"
for r in old1 e1 old2 e2; do
  TUNETAB_TIME_FP8="$spec" .carry_ab/${r%?}/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/ab4/$r.log" 2>&1
  echo "run $r: rc=$? $(grep -c '^TIME ' "$OUT/ab4/$r.log") timings; $(grep -cE 'Failure|FAILED' "$OUT/ab4/$r.log") failure lines"
done
python3 - "$OUT/ab4" <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
runs = ("old1", "e1", "old2", "e2")
for r in runs:
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(m[1], m[2], m[3], m[4])][r] = float(m[5])
lg = collections.defaultdict(list)
for k, v in t.items():
    if len(v) < 4: continue
    mean = {b: (v[b + "1"] + v[b + "2"]) / 2 for b in ("old", "e")}
    lg["e"].append(math.log(mean["e"] / mean["old"]))
    print(f"{'x'.join(k[:3]):>16} {k[3]:<38} " + " ".join(f"{r} {v[r]:.2f}" for r in runs) +
          f"  e/old {mean['e'] / mean['old']:.3f}")
for b in ("e",): print(f"geomean {b}/old {math.exp(sum(lg[b]) / len(lg[b])):.3f} over {len(lg[b])}")
PY
tar czf "$OUT/ab4.tgz" -C "$OUT" ab4 && rm -rf "$OUT/ab4"
TUNETAB_FP8_ONLY=tma4 timeout 240 .carry_ab/e/tunetab_gpu_tests --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes > "$OUT/ragged_tma4_e.log" 2>&1
echo "ragged tma4 (E): rc=$?"; tail -n 2 "$OUT/ragged_tma4_e.log"
