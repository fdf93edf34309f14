#!/usr/bin/env bash
# A/B of two builds of the FP8 GEMM kernels on one GPU: GemmFp8Gpu.TimeConfigs* of build A and build B in turn (A B A
# B), the same configs at the same shapes, then B's ragged-shape test (every config of kinds $ONLY). Prints each
# config's mean time per build and B/A, the geomean of B/A per M, and the best config per shape of each build.
# Outputs in $OUT: ab.tgz (each run's log), ragged_b.log.
#   usage: OUT=... B=path/to/tunetab_gpu_tests MS="336 352" CFGS="cfg,cfg" bash scripts/ab_fp8.sh
#          (env A=.carry/tunetab_gpu_tests, KEYS="N,K ..." (the GLM-5 EP8 profile's eight dense FP8 keys),
#          ONLY=tma4: TUNETAB_FP8_ONLY of the ragged test, RAGGED_S=240: its limit, 0 skips it,
#          WIN="304:1.0 336:0.99": B wins if its geomean B/A at each M is at most that and its ragged test passes;
#          then the exit status says whether it won: 0 won, 1 not)
set -uo pipefail
cd "$(dirname "$0")/.."
a=${A:-.carry/tunetab_gpu_tests}
b=${B:?B: the build to compare (a tunetab_gpu_tests)}
out=${OUT:-out}
ragged_s=${RAGGED_S:-240}
only=${ONLY:-tma4}
keys=${KEYS:-"2048,2048 2624,6144 3072,6144 3584,512 4096,2048 512,6144 6144,1536 6144,2048"}
spec=""
for m in ${MS:?MS: the M values}; do
  for nk in $keys; do spec+="$m,$nk:${CFGS:?CFGS: the configs, comma-separated};"; done
done
spec=${spec%;}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
mkdir -p "$out/ab"
for r in a1 b1 a2 b2; do
  bin=$a; [[ $r == b* ]] && bin=$b
  TUNETAB_TIME_FP8="$spec" "$bin" --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$out/ab/$r.log" 2>&1
  echo "run $r: rc=$? $(grep -c '^TIME ' "$out/ab/$r.log") timings; $(grep -cE 'Failure|FAILED' "$out/ab/$r.log") failure lines"
done
python3 - "$out/ab" "${WIN:-}" <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
runs = ["a1", "b1", "a2", "b2"]
for r in runs:
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(int(m[1]), int(m[2]), int(m[3]), m[4])][r] = float(m[5])
lg = collections.defaultdict(list)
best = collections.defaultdict(lambda: [(1e9, ""), (1e9, "")])
for k in sorted(t):
    v = t[k]
    if len(v) < len(runs): continue
    a, b = (v["a1"] + v["a2"]) / 2, (v["b1"] + v["b2"]) / 2
    lg[k[0]].append(math.log(b / a))
    bb = best[k[:3]]; bb[0] = min(bb[0], (a, k[3])); bb[1] = min(bb[1], (b, k[3]))
    print(f"{'x'.join(map(str, k[:3])):>16} {k[3]:<38} A {a:.2f} ({v['a1']:.2f}/{v['a2']:.2f}) B {b:.2f} ({b / a:.3f})")
geo = {m: math.exp(sum(l) / len(l)) for m, l in lg.items()}
for m in sorted(geo): print(f"M {m}: geomean B/A {geo[m]:.3f} over {len(lg[m])}")
for k, ((a, ca), (b, cb)) in sorted(best.items()):
    print(f"best {'x'.join(map(str, k))}: A {a:.2f} {ca}  B {b:.2f} {cb} ({b / a:.3f})")
win = [w.split(":") for w in sys.argv[2].split()]
sys.exit(0 if all(int(m) in geo and geo[int(m)] <= float(x) for m, x in win) else 1)
PY
geo_ok=$?
tar czf "$out/ab.tgz" -C "$out" ab && rm -rf "$out/ab"
ragged_rc=0
if [ "$ragged_s" -gt 0 ]; then
  TUNETAB_FP8_ONLY=$only timeout "$ragged_s" "$b" --gtest_filter=GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes \
    > "$out/ragged_b.log" 2>&1
  ragged_rc=$?
  echo "ragged (B, $only): rc=$ragged_rc"; tail -n 2 "$out/ragged_b.log"
fi
if [ -n "${WIN:-}" ]; then
  if [ $geo_ok = 0 ] && [ $ragged_rc = 0 ]; then echo "verdict: B wins ($WIN)"; exit 0; fi
  echo "verdict: B does not win ($WIN; geomeans $([ $geo_ok = 0 ] && echo within || echo "not all within"), ragged rc=$ragged_rc)"; exit 1
fi
