#!/usr/bin/env bash
# Session 29, call 8: the 257..512 MoE row, side by side on HEAD's binaries. The tune ranks its configs by their mean
# over M 257/384/512; the acceptance measures 304 and 336. Five configs over nine Ms of the bucket (balanced) and
# 304 / 336 / 512 skewed, each binary run once, in one process.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
C="fp8_m64w64_n128x256_k128_s3_wgmma2_sk1,fp8_m64w64_n128x256_k128_s4_wgmma2_sk1,fp8_m96w96_n128x128_k128_s4_wgmma2_sk1,fp8_m128w64_n64x128_k128_s4_wgmma2_sk1,fp8_m32w32_n256x128_k128_s3_wgmma2_sk1"
spec=""
for m in 257 288 304 320 336 352 384 448 512 304,skewed 336,skewed 512,skewed; do spec+="$m:$C;"; done
TUNETAB_TIME_MOE="${spec%;}" timeout 400 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time.log" 2>&1
echo "rc=$? $((SECONDS - t0)) s"
python3 - "$OUT/time.log" <<'PY' | tee "$OUT/bucket.txt"
import re, sys, statistics
t = {}
for line in open(sys.argv[1]):
    m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
    if m: t.setdefault(m[3] + "_" + m[4], {})[(int(m[1]), m[2])] = float(m[5])
ms = [257, 288, 304, 320, 336, 352, 384, 448, 512]
print("config                  " + " ".join(f"{m:>6d}" for m in ms) + "   mean3  mean9 | skewed 304    336    512")
for c, r in t.items():
    b = [r.get((m, "balanced")) for m in ms]
    m3 = statistics.mean([r[(m, "balanced")] for m in (257, 384, 512)])
    m9 = statistics.mean([x for x in b if x])
    print(f"{c:24s}" + " ".join(f"{x:6.1f}" if x else "     -" for x in b) + f"  {m3:6.1f} {m9:6.1f} | " +
          " ".join(f"{r.get((m, 'skewed'), 0):6.1f}" for m in (304, 336, 512)))
PY
echo "total $((SECONDS - t0)) s"
