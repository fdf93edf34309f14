#!/usr/bin/env bash
# Session 19, call 2: call 1's ncu showed the 128-token stage 1 (m128w64, 64 rows of W, the producer gathering
# 16 KB of token rows a K block by cp.async) at 52% L2 and 36% DRAM throughput: 475 against 336 us for the 64-token
# tile. .carry_t: the stages' inputs quantized into sorted order (moe_quant_sorted, scales transposed; stage 1 writes
# its output so), so one producer thread copies W, tokens and token scales by TMA. .carry: f962422 (cp.async
# gather), the baseline, in the same call. Correctness of .carry_t first (MoeGpu.*), then the timing table for both
# (call 1's table: its config names lacked their `$`), then, if the new inputs win, the profile tune with the time left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry_t/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu_t.log" 2>&1
echo "MoeGpu (t) rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu_t.log" | head -20
E=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1   # the M=512 row's (serves 257..512)
S=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1   # the M=256 row's
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
G4=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1; G6=fp8_m128w64_n64x128_k128_s6_wgmma2_sk1
F6=fp8_m128w64_n64x64_k128_s6_wgmma2_sk1;  H6=fp8_m64w32_n64x128_k128_s6_wgmma2_sk1
spec="128:$S,$E,$H6;256:$S,$E,$H6,$G6;304:$E,$W,$G4,$G6,$F6,$H6;336:$E,$W,$G4,$G6,$F6,$H6;512:$E,$W,$G6,$F6;2048:$E,$G6;336,skewed:$E,$W,$G6,$F6,$H6;512,skewed:$E,$G6"
for v in carry_t carry; do
  TUNETAB_TIME_MOE="$spec" timeout 200 .$v/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time_$v.log" 2>&1
  echo "time $v rc=$? $((SECONDS - t0)) s"; grep -E "^TIME|FAILED|Failure" "$OUT/time_$v.log" | sed 's/ min_us.*//; s/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//' | cut -c1-200
done
# If .carry_t passed and its best config at 336 beats the exported row's config on .carry by 5%: the profile tune
# (resumable) with the time left, on .carry_t's binary (its wgmma2 code keys are new: the MoE key is re-judged).
python3 - "$OUT" > "$OUT/decide.txt" <<'PY'
import re, sys
t = {}
for v in ("carry_t", "carry"):
    for line in open(f"{sys.argv[1]}/time_{v}.log"):
        m = re.match(r"TIME m=(\d+),.*routing=(\w+) (\S+) median_us=([\d.]+)", line)
        if m: t[(v, int(m[1]), m[2], m[3])] = float(m[4])
base = t.get(("carry", 336, "balanced", "fp8_m64w64_n128x256_k128_s3_wgmma2_sk1"))
best = min(((us, k[3]) for k, us in t.items() if k[0] == "carry_t" and k[1] == 336 and k[2] == "balanced"), default=None)
print(f"336 balanced: carry E {base} us, carry_t best {best}")
print("TUNE" if base and best and best[0] < 0.95 * base else "NO-TUNE")
PY
cat "$OUT/decide.txt"
if grep -q "^\[  PASSED  \] 9 tests" "$OUT/moe_gpu_t.log" && grep -q "^TUNE" "$OUT/decide.txt"; then
  left=$(( ${TOTAL_S:-580} - (SECONDS - t0) ))
  BIN=.carry_t BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/glm5.tune.log" | cut -c1-200
fi
echo "total $((SECONDS - t0)) s"
