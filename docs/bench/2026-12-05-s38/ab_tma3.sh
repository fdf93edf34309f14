#!/usr/bin/env bash
# Session 38: tma3 (each consumer's promotion overlapped with its own next MMAs) against tma2 on the same tiles, and
# cuBLASLt, in one process a binary: the dense FP8 shapes over cuBLASLt at M <= 336 and the slowest at M >= 1024.
# First GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes (tma3 against the reference; marker build/s38_tma3_ok).
#   usage: OUT=... bash docs/bench/2026-12-05-s38/ab_tma3.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
t0=$SECONDS
if [ ! -f build/s38_tma3_ok ]; then
  timeout 200 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' > "$OUT/ragged.log" 2>&1
  rc=$?; echo "ragged rc=$rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |Failure|tma3" "$OUT/ragged.log" | head -12
  [ $rc = 0 ] && mkdir -p build && touch build/s38_tma3_ok
fi
small="m128n96k128_w64x96_s4_X_sk1,m64n192k128_w64x96_s4_X_sk1,m128n128k128_w64x128_s4_X_sk1,m64n256k128_w64x128_s4_X_sk1"
small+=",m64n128k128_w64x128_s4_X_sk1"
# tma3 with deeper rings (not in the config space): its consumers hold two stages at a time
deep="m128n96k128_w64x96_s6_tma3_sk1,m64n192k128_w64x96_s6_tma3_sk1,m128n128k128_w64x128_s6_tma3_sk1,m64n256k128_w64x128_s5_tma3_sk1"
large="m128n128k128_w64x128_s4_X_sk1,m128n128k128_w64x128_s4_X_p132_sk1,m128n96k128_w64x96_s4_X_p132_sk1,m64n256k128_w64x128_s4_X_p132_sk1"
spec=""
for s in 256,6144,1536 256,6144,2048 304,4096,2048 336,4096,2048 336,3072,6144 304,3072,6144; do
  spec+="${spec:+;}$s:${small//X/tma2},${small//X/tma3},$deep"
done
for s in 2048,2048,2048 1024,4096,2048 1024,3584,512; do spec+=";$s:${large//X/tma2},${large//X/tma3}"; done
shapes="256,6144,1536;256,6144,2048;304,4096,2048;336,4096,2048;336,3072,6144;304,3072,6144;2048,2048,2048;1024,4096,2048;1024,3584,512"
for run in 1 2; do
  TUNETAB_TIME_FP8="$spec" timeout 150 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/time$run.log" 2>&1
  echo "timing $run rc=$? $((SECONDS - t0)) s"
done
(cd bench && timeout 100 python3 fp8_baseline.py --shapes "$shapes" --json "$OUT/cublaslt.json") > "$OUT/cublaslt.log" 2>&1
echo "cublaslt rc=$? $((SECONDS - t0)) s"
python3 - "$OUT" <<'PY'
import json, re, sys, os
out = sys.argv[1]
base = {(r["m"], r["n"], r["k"]): r.get("median_us") for r in json.load(open(f"{out}/cublaslt.json"))["shapes"]}
times = {}
for run in (1, 2):
    for line in open(f"{out}/time{run}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: times.setdefault((tuple(map(int, m.group(1, 2, 3))), m.group(4)), []).append(float(m.group(5)))
rows = []
for key in sorted({k for k, _ in times}):
    b = base.get(key)
    best = {}
    print(f"{key} cuBLASLt {b:.2f} us" if b else f"{key} cuBLASLt -")
    for (k, name), ts in sorted(times.items()):
        if k != key or "tma2" not in name: continue
        n3 = name.replace("tma2", "tma3")
        t2 = sum(ts) / len(ts); t3 = sum(times.get((k, n3), [float("nan")])) / len(times.get((k, n3), [1]))
        print(f"   {name:40s} tma2 {t2:7.2f}  tma3 {t3:7.2f}  tma3/tma2 {t3 / t2:.3f}  best/cuBLASLt {min(t2, t3) / b if b else float('nan'):.3f}")
        for kind, t in (("tma2", t2), ("tma3", t3)): best[kind] = min(best.get(kind, 1e9), t)
    print(f"   best tma2 {best['tma2']:.2f} ({best['tma2'] / b:.3f}x)  best tma3 {best['tma3']:.2f} ({best['tma3'] / b:.3f}x)" if b else "")
    for (k, name), ts in sorted(times.items()):
        if k == key and "tma3" in name and "_s4_" not in name:
            t = sum(ts) / len(ts)
            print(f"   deeper: {name:40s} {t:7.2f}  /cuBLASLt {t / b if b else float('nan'):.3f}")
PY
echo "total $((SECONDS - t0)) s"
