#!/usr/bin/env bash
# Session 20, call 3. .carry_t4 = HEAD 88966b6 (a230191's kernels with e1e5a57 re-applied; the runner's served-M
# timing). .carry_t5 = t4 + moe_quant_sorted's conversion by the hardware (cvt.rn.satfinite.e4m3x2.f32) instead of
# f32_to_e4m3's software path. Correctness of t5, t5 against t4 in one call, then the profile tune (from session 17's
# database) on the faster of the two that passed, then (time left) ncu of the quant kernels at M=336.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t5/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t5.log" 2>&1
moe_rc=$?
echo "MoeGpu (t5) rc=$moe_rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t5.log" | head -20
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="128:$S,$E4;256:$S;304:$E4,$W;336:$E4,$W;512:$E4,$W"
for v in carry_t5 carry_t4; do
  TUNETAB_TIME_MOE="$spec" timeout 90 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" "$moe_rc" <<'PY' | tee "$OUT/ab.txt"
import math, re, sys
t = {}
for v in ("carry_t5", "carry_t4"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
ratios = []
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    ratio = r["carry_t5"] / r["carry_t4"] if len(r) == 2 else float("nan")
    ratios.append(ratio)
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:20s} t5 {f('carry_t5')} t4 {f('carry_t4')} t5/t4 {ratio:.3f}")
ok = sys.argv[2] == "0" and ratios and all(x <= 1.02 for x in ratios) and math.exp(sum(map(math.log, ratios)) / len(ratios)) <= 0.99
print("BIN=.carry_t5" if ok else "BIN=.carry_t4")
PY
bin=$(tail -n 1 "$OUT/ab.txt" | cut -d= -f2)
rm -f build/glm5.db  # session 17's database (runs/glm5.db.gz), not call 2's
left=$(( ${TOTAL_S:-560} - (SECONDS - t0) ))
BIN=$bin BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
echo "tune ($bin) rc=$? $((SECONDS - t0)) s"; grep -A15 "^\[14/14\]" "$OUT/glm5.tune.log" | cut -c1-200; tail -n 8 "$OUT/glm5.tune.log" | cut -c1-200
for v in carry_t5 carry_t4; do
  [ $((SECONDS - t0)) -lt 570 ] || break
  TUNETAB_TIME_MOE="336:$E4" timeout $(( 585 - (SECONDS - t0) )) ncu --clock-control none --cache-control none -k regex:moe_quant --launch-skip 2 --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__bytes_write.sum .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' 2>&1 | grep -E "moe_quant|gpu__time|dram__bytes" > "$OUT/ncu_quant_$v.txt"
  echo "== ncu quant $v"; cat "$OUT/ncu_quant_$v.txt"
done
echo "total $((SECONDS - t0)) s"
