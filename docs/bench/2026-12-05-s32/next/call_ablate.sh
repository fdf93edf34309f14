#!/usr/bin/env bash
# Where tma2's K loop spends its time, and whether clusters help (session 32's questions; nothing here has run yet).
# 1. .carry_x (build_x.sh: main + ablate.patch) times tma2 configs with parts of the K loop taken out, one process
#    per TT_ABLATE mask: 0 all, 1 no promotion, 2 no scale loads, 4 no MMAs (the copies' and barriers' bound), 8 no
#    TMA copies (the consumers' bound: MMAs on whatever the stages hold), 9 no copies and no promotion (the MMA chain),
#    12 neither copies nor MMAs (barriers and promotion); results wrong, their tests fail, their times count. 16 is a
#    candidate (results right): two producer threads, one copying A and one B; 20 = 16 + 4. Then 0 again (drift).
# 2. .carry_c (branch s32-tma2-cluster's GPU tests): the ragged-shape test on the cluster configs alone, then each
#    cluster config against its unclustered twin in the same process, two processes (ab_clusters.txt).
# Carry .carry_x .carry_c; about 300 s (each config's validation computes its Eigen reference).
# Usage: OUT=... bash docs/bench/2026-12-05-s32/next/call_ablate.sh
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
spec="336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk1,m64n64k128_w64x64_s4_tma2_sk1,m64n192k128_w64x96_s4_tma2_sk1"
spec+=";1024,4096,2048:m128n128k128_w64x128_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk1"
for mode in 0 1 2 4 8 9 12 16 20 0b; do
  TT_ABLATE=${mode%b} TUNETAB_TIME_FP8="$spec" timeout 60 .carry_x/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/ablate_$mode.log" 2>&1
  echo "mode $mode rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" <<'PY' | tee "$OUT/ablate.txt"
import re, sys
modes = ["0", "1", "2", "4", "8", "9", "12", "16", "20", "0b"]
t = {}
for m in modes:
    try: s = open(f"{sys.argv[1]}/ablate_{m}.log").read()
    except OSError: continue
    for x in re.finditer(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", s):
        t.setdefault((int(x[1]), int(x[2]), int(x[3]), x[4]), {})[m] = float(x[5])
print("us (ns a K block of 128 in brackets); masks: 1 no promotion, 2 no scales, 4 no MMAs, 8 no copies, 16 two issuers")
print(f"{'shape':16s} {'config':34s} " + " ".join(f"{m:>13s}" for m in modes))
for (mm, n, k, c), r in sorted(t.items()):
    kb = (k + 127) // 128
    cells = [f"{r[m]:6.2f} ({1000 * r[m] / kb:4.0f})" if m in r else f"{'-':>13s}" for m in modes]
    print(f"{mm}x{n}x{k:<6d} {c:34s} " + " ".join(cells))
PY
TUNETAB_FP8_ONLY=tma2_c timeout 120 .carry_c/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.ConfigsMatchReferenceOnRaggedShapes' \
  > "$OUT/clusters_ragged.log" 2>&1
echo "clusters ragged rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |Failure|index(32|64):" "$OUT/clusters_ragged.log" | head -8
w96=m128n96k128_w64x96_s4_tma2; w128=m128n128k128_w64x128_s4_tma2; n192=m64n192k128_w64x96_s4_tma2
n64=m64n64k128_w64x64_s4_tma2; n128=m64n128k128_w64x64_s4_tma2
tw() { local s=""; for c in "$@"; do s+="${s:+,}${c}_sk1,${c}_cn2_sk1,${c}_c2_sk1"; done; echo "$s"; }
# Each config is validated first (its own Eigen reference), so the list stays short: 30 configs a run.
cspec="336,3072,6144:$(tw $w96 $w128 $n192 $n64 $n128);256,6144,2048:$(tw $w96 $n192)"
cspec+=";1024,4096,2048:$(tw $w128 $w96);2048,2048,2048:$(tw $w128)"
for rep in 1 2; do
  TUNETAB_TIME_FP8="$cspec" timeout 120 .carry_c/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/clusters_time_$rep.log" 2>&1
  echo "clusters time #$rep rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab_clusters.txt"
import re, sys, statistics
t = {}
for rep in (1, 2):
    try: s = open(f"{sys.argv[1]}/clusters_time_{rep}.log").read()
    except OSError: continue
    for x in re.finditer(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+?)(_cn2|_c2)?_sk1 median_us=([\d.]+)", s):
        t.setdefault((int(x[1]), int(x[2]), int(x[3]), x[4]), {}).setdefault(x[5] or "", []).append(float(x[6]))
print("us, mean of two runs; cn2: 2 CTAs along N sharing A; c2: 2 along M sharing B")
print(f"{'shape':16s} {'config':30s} {'plain':>8s} {'cn2':>8s} {'c2':>8s} {'cn2/p':>6s} {'c2/p':>6s}")
for (m, n, k, c), r in sorted(t.items()):
    p = statistics.mean(r[""]) if "" in r else float("nan")
    f = lambda v: statistics.mean(r[v]) if v in r else float("nan")
    print(f"{m}x{n}x{k:<6d} {c:30s} {p:8.2f} {f('_cn2'):8.2f} {f('_c2'):8.2f} {f('_cn2') / p:6.3f} {f('_c2') / p:6.3f}")
PY
grep -h -E "Failure|passed: false" "$OUT"/clusters_time_*.log | head -4
tar czf "$OUT/ablate_logs.tgz" -C "$OUT" $(cd "$OUT" && ls ablate_*.log clusters_*.log) && (cd "$OUT" && rm -f ablate_*.log clusters_*.log)
echo "total $((SECONDS - t0)) s"
