#!/usr/bin/env bash
# Session 20, call 2. .carry_t3 = .carry_t2 (e1e5a57 re-applied) + moe_quant_sorted a block a row (its loads of a
# row issued before their math) + the runner's served-M timing (each row's finalists timed at a sample of the Ms it
# serves, the row ranked by their mean there). Correctness first (MoeGpu.* on t3; gpu_check's e2e and safety parts,
# which run the runner end to end, resume and the planted faults), then t3 against t2 in one process each, then the
# profile tune on t3 in the time left (resumable: the database comes back in $OUT).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t3/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t3.log" 2>&1
moe_rc=$?
echo "MoeGpu (t3) rc=$moe_rc $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t3.log" | head -20
BIN=.carry_t3 PARTS="e2e safety" STEP_TIMEOUT=200 bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
echo "gpu_check e2e+safety rc=$? $((SECONDS - t0)) s"; cat "$OUT/gpu_check/summary.txt"
E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="128:$S,$E4;256:$S;336:$E4,$W;512:$E4,$W"
for v in carry_t3 carry_t2; do
  TUNETAB_TIME_MOE="$spec" timeout 90 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import re, sys
t = {}
for v in ("carry_t3", "carry_t2"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    ratio = f"{r['carry_t3'] / r['carry_t2']:.3f}" if len(r) == 2 else "-"
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:20s} t3 {f('carry_t3')} t2 {f('carry_t2')} t3/t2 {ratio}")
PY
if [ "$moe_rc" = 0 ]; then
  left=$(( ${TOTAL_S:-575} - (SECONDS - t0) ))
  BIN=.carry_t3 BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; tail -n 14 "$OUT/glm5.tune.log" | cut -c1-220
fi
echo "total $((SECONDS - t0)) s"
