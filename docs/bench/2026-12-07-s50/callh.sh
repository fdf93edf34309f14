#!/usr/bin/env bash
# Session 50: does TMA's zero fill of A rows past M cost the partial tiles at M 336 / 352 too? (carry .carry, .carry_x:
# h.tgz packs .carry_ab/h/tunetab_gpu_tests, branch s50-h (`s50-h.mbox`): a partial tile copies its whole 64-row halves
# in 64-row boxes and the rest in 16-row boxes, at most 15 rows zero-filled, where main zero-fills up to 127 at 336 / 352.)
# - on an H200: docs/bench/2026-12-06-s46/next.sh (issue 6's acceptance, main's binaries).
# - on any other GPU: old H old H, four tma4 tiles at M 304 / 336 / 352 for the eight dense FP8 keys; the ragged-shape
#   test on tma4 with H. Outputs: h.tgz (the logs), ragged_tma4_h.log.   usage: OUT=... bash docs/bench/2026-12-07-s50/callh.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] && exec bash docs/bench/2026-12-06-s46/next.sh
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
tar xzf .carry_x/h.tgz
t="m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n64k128_w64x64_s6_tma4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1"
spec=""
for m in 304 336 352; do
  for nk in 2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048; do spec+="$m,$nk:$t;"; done
done
spec=${spec%;}
runs="old1 h1 old2 h2"
mkdir -p "$OUT/h"
for r in $runs; do
  bin=.carry/tunetab_gpu_tests; [[ $r == h* ]] && bin=.carry_ab/h/tunetab_gpu_tests
  TUNETAB_TIME_FP8="$spec" $bin --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/h/$r.log" 2>&1
  echo "run $r: rc=$? $(grep -c '^TIME ' "$OUT/h/$r.log") timings; $(grep -cE 'Failure|FAILED' "$OUT/h/$r.log") failure lines"
done
python3 - "$OUT/h" $runs <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
runs = sys.argv[2:]
for r in runs:
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(int(m[1]), int(m[2]), int(m[3]), m[4])][r] = float(m[5])
lg = collections.defaultdict(list)
best = collections.defaultdict(lambda: [1e9, 1e9])
for k in sorted(t):
    v = t[k]
    if len(v) < len(runs): continue
    o, h = (v["old1"] + v["old2"]) / 2, (v["h1"] + v["h2"]) / 2
    lg[k[0]].append(math.log(h / o))
    b = best[k[:3]]; b[0] = min(b[0], o); b[1] = min(b[1], h)
    print(f"{'x'.join(map(str, k[:3])):>16} {k[3]:<38} old {o:.2f} ({v['old1']:.2f}/{v['old2']:.2f}) h {h:.2f} ({h / o:.3f})")
for m, l in sorted(lg.items()): print(f"M {m}: geomean h/old {math.exp(sum(l) / len(l)):.3f} over {len(l)}")
for k, (o, h) in sorted(best.items()): print(f"best of the four tiles {'x'.join(map(str, k))}: old {o:.2f} h {h:.2f} ({h / o:.3f})")
PY
tar czf "$OUT/h.tgz" -C "$OUT" h && rm -rf "$OUT/h"
TUNETAB_FP8_ONLY=tma4 timeout 240 .carry_ab/h/tunetab_gpu_tests --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes > "$OUT/ragged_tma4_h.log" 2>&1
echo "ragged tma4 (H): rc=$?"; tail -n 2 "$OUT/ragged_tma4_h.log"
