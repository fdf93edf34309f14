#!/usr/bin/env bash
# Where tma2's K loop spends its time (session 32's question; nothing here has run yet): .carry_x (build_x.sh:
# main + ablate.patch) times tma2 configs with parts of the K loop taken out, one process per TT_ABLATE mask:
#   0 all, 1 no promotion, 2 no scale loads, 4 no MMAs (the copies' and barriers' bound), 8 no TMA copies (the
#   consumers' bound: MMAs on whatever the stages hold), 9 no copies and no promotion (the MMA chain), 12 neither
#   copies nor MMAs (barriers and promotion). Results of these masks are wrong: their tests fail, their times count.
#   16 is a candidate, not an ablation (results right): two producer threads, one copying A and one B; 20 = 16 + 4.
# Then clusters (TT_CLUSTER_M / TT_CLUSTER_N: CTAs along M share each B tile, along N each A tile, by TMA multicast;
# results right: their tests must pass), and 0 again, for the drift. Carry .carry_x; about 220 s.
# Usage: OUT=... bash call_ablate.sh
set -uo pipefail
cd "$(dirname "$0")/../../../.."
t0=$SECONDS
spec="336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk1,m64n64k128_w64x64_s4_tma2_sk1,m64n192k128_w64x96_s4_tma2_sk1"
spec+=";1024,4096,2048:m128n128k128_w64x128_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk1"
for mode in 0 1 2 4 8 9 12 16 20 cn2 cn4 cm2 cm2cn2 cn2_16 0b; do
  case $mode in
    cn2) env="TT_CLUSTER_N=2" ;; cn4) env="TT_CLUSTER_N=4" ;; cm2) env="TT_CLUSTER_M=2" ;;
    cm2cn2) env="TT_CLUSTER_M=2 TT_CLUSTER_N=2" ;; cn2_16) env="TT_CLUSTER_N=2 TT_ABLATE=16" ;; *) env="TT_ABLATE=${mode%b}" ;;
  esac
  env $env TUNETAB_TIME_FP8="$spec" timeout 60 .carry_x/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
    > "$OUT/ablate_$mode.log" 2>&1
  echo "mode $mode ($env) rc=$? $((SECONDS - t0)) s"; grep -E "Failure|rel_l2|FAILED  \]" "$OUT/ablate_$mode.log" | head -3
done
python3 - "$OUT" <<'PY' | tee "$OUT/ablate.txt"
import re, sys
modes = ["0", "1", "2", "4", "8", "9", "12", "16", "20", "cn2", "cn4", "cm2", "cm2cn2", "cn2_16", "0b"]
t = {}
for m in modes:
    try: s = open(f"{sys.argv[1]}/ablate_{m}.log").read()
    except OSError: continue
    for x in re.finditer(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", s):
        t.setdefault((int(x[1]), int(x[2]), int(x[3]), x[4]), {})[m] = float(x[5])
print("us (ns a K block of 128 in brackets); masks: 1 no promotion, 2 no scales, 4 no MMAs, 8 no copies, 16 two issuers;")
print("cnX / cmY: clusters of X CTAs along N (sharing A) / Y along M (sharing B)")
print(f"{'shape':16s} {'config':34s} " + " ".join(f"{m:>13s}" for m in modes))
for (mm, n, k, c), r in sorted(t.items()):
    kb = (k + 127) // 128
    cells = [f"{r[m]:6.2f} ({1000 * r[m] / kb:4.0f})" if m in r else f"{'-':>13s}" for m in modes]
    print(f"{mm}x{n}x{k:<6d} {c:34s} " + " ".join(cells))
PY
tar czf "$OUT/ablate_logs.tgz" -C "$OUT" $(cd "$OUT" && ls ablate_*.log) && (cd "$OUT" && rm -f ablate_*.log)
echo "total $((SECONDS - t0)) s"
