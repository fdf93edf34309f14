#!/usr/bin/env bash
# Session 19, call 3: call 2's sorted inputs (a230191, .carry_t) were 3-13% faster at M >= 336 but 7-12% slower at
# M 128-256, where stage 2's short tiles are many: its producer's thread 0 waited each tile on the metadata loads
# (sorted ids, then top-k weights) of the whole warpgroup (a named barrier). .carry_t2 (e1e5a57): thread 0 never
# waits on them; warps 1-3 publish the metadata on a barrier of their own. Baselines in the same call: .carry_t
# and .carry (f962422, the cp.async gather). Correctness of .carry_t2 first, then the timing table, then (if t2
# passed and is no slower than the gather at 128/256 and than t at 336/512, within 2%) the profile tune.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t2/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t2.log" 2>&1
echo "MoeGpu (t2) rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t2.log" | head -20
E=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1; E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="128:$S,$E4;256:$S,$E;304:$E4,$W;336:$E4,$W;512:$E4,$W;256,skewed:$S;336,skewed:$E4,$W"
for v in carry_t2 carry_t carry; do
  TUNETAB_TIME_MOE="$spec" timeout 120 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT" > "$OUT/decide.txt" <<'PY'
import re, sys
t = {}
for v in ("carry_t2", "carry_t", "carry"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) fp8_(\S+?)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", line)
        if m: t.setdefault((int(m[1]), m[2], m[3] + "_" + m[4]), {})[v] = float(m[5])
ok = True
for k in sorted(t):
    r = t[k]; f = lambda v: f"{r[v]:8.1f}" if v in r else "       -"
    print(f"{k[0]:4d} {k[1]:8s} {k[2]:20s} t2 {f('carry_t2')} t {f('carry_t')} gather {f('carry')}")
    if "carry_t2" not in r: ok = False; continue
    ref = r.get("carry") if k[0] <= 256 else r.get("carry_t")
    if ref and r["carry_t2"] > 1.02 * ref: ok = False
print("TUNE" if ok else "NO-TUNE")
PY
cat "$OUT/decide.txt"
if grep -q "^\[  PASSED  \] 9 tests" "$OUT/moe_gpu_t2.log" && grep -q "^TUNE" "$OUT/decide.txt"; then
  left=$(( ${TOTAL_S:-560} - (SECONDS - t0) ))
  BIN=.carry_t2 BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/glm5.tune.log" | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
