#!/usr/bin/env bash
# Session 49, call 2 (carry .carry, .carry_x: ab.tgz packs .carry_ab/{old,e,f,g}/tunetab_gpu_tests: main, s48-oob2,
# s49-f (E with the producer's loop split, so whole tiles run main's loop), s49-g (main with E's argument block only)).
# - on an H200: docs/bench/2026-12-06-s46/next.sh (issue 6's re-tune from runs/glm5.db.gz and its benchmark, main's
#   binaries; TOTAL_S passes through to scripts/tune_and_bench.sh).
# - on any other GPU: where E's whole-tile cost comes from: old G F E, twice, in turn, on call 1's shapes; the
#   ragged-shape test on tma4 with F.
# Outputs: glm5.tune.log, glm5.db.gz, glm5.tables.tgz, bench.tgz; or abfg.tgz, ragged_tma4_f.log.
#   usage: OUT=... bash docs/bench/2026-12-07-s49/call2.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] && exec bash docs/bench/2026-12-06-s46/next.sh
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
tar xzf .carry_x/ab.tgz
t="m128n128k128_w64x128_s6_tma4_sk1,m128n96k128_w64x96_s6_tma4_sk1,m128n64k128_w64x64_s6_tma4_sk1,m64n192k128_w64x96_s6_tma4_c2_sk1"
spec=""
for nk in 2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048; do spec+="304,$nk:$t;"; done
spec+="336,4096,2048:$t;336,3072,6144:$t"
runs="old1 g1 f1 e1 old2 g2 f2 e2"
mkdir -p "$OUT/abfg"
for r in $runs; do
  TUNETAB_TIME_FP8="$spec" .carry_ab/${r%?}/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/abfg/$r.log" 2>&1
  echo "run $r: rc=$? $(grep -c '^TIME ' "$OUT/abfg/$r.log") timings; $(grep -cE 'Failure|FAILED' "$OUT/abfg/$r.log") failure lines"
done
python3 - "$OUT/abfg" $runs <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
runs = sys.argv[2:]
for r in runs:
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(m[1], m[2], m[3], m[4])][r] = float(m[5])
builds = ("g", "f", "e")
lg = collections.defaultdict(list)
for k, v in t.items():
    if len(v) < len(runs): continue
    mean = {b: (v[b + "1"] + v[b + "2"]) / 2 for b in ("old",) + builds}
    for b in builds: lg[b].append(math.log(mean[b] / mean["old"]))
    print(f"{'x'.join(k[:3]):>16} {k[3]:<38} old {mean['old']:.2f} " +
          " ".join(f"{b} {mean[b]:.2f} ({mean[b] / mean['old']:.3f})" for b in builds))
for b in builds: print(f"geomean {b}/old {math.exp(sum(lg[b]) / len(lg[b])):.3f} over {len(lg[b])}")
PY
tar czf "$OUT/abfg.tgz" -C "$OUT" abfg && rm -rf "$OUT/abfg"
TUNETAB_FP8_ONLY=tma4 timeout 240 .carry_ab/f/tunetab_gpu_tests --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes > "$OUT/ragged_tma4_f.log" 2>&1
echo "ragged tma4 (F): rc=$?"; tail -n 2 "$OUT/ragged_tma4_f.log"
