#!/usr/bin/env bash
# Session 16, call 2: the persistent wgmma2 MoE stages with bf16 stage-2 rows (b55fff9 + the next commit), against the stages a CTA a
# tile (call 1), then the profile tune on them if they passed and were faster.
#  1. MoeGpu.* on the new binaries.
#  2. The MoE timing tool on the wgmma2 rows' configs, M=16 to 512 and 336 skewed (call 1 timed the same configs on
#     the old stages; no device time is left for an A/B in one call: three calls were refused a machine).
#  3. If 1 passed and the new stages were faster at 304, 336 and 512 in sum: the profile tune, resumed, and if it
#     finishes with time left, the MoE half of issue 6's benchmark on its tables (PARTS=moe).
#   usage (on the device): bash docs/bench/2026-12-02-s16/call2.sh [TOTAL_S]
# NOTE: as run in call 2 its pattern lacked the '.*' before routing= (fixed after): it matched no line, so the
# check read 0 and the tune was skipped; call3.sh ran it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
total=${1:-585}
t0=$SECONDS
o=$OUT/c2; mkdir -p "$o"
timeout 240 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*' > "$o/moe_tests.log" 2>&1
trc=$?; echo "MoeGpu.* rc=$trc $((SECONDS - t0)) s"; grep -E "^\[ +(OK|FAILED|PASSED) |Failure" "$o/moe_tests.log" | head -20
A=fp8_m32w32_n256x128_k128_s3_wgmma2_sk1; B=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
C=fp8_m64w64_n128x256_k128_s3_wgmma2_sk1; D=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
spec="16:$A;128:$B;304:$C,$D;336:$C,$D;512:$C,$D;336,skewed:$C,$D"
TUNETAB_TIME_MOE="$spec" timeout 120 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$o/time_new.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "Failure" -A3 "$o/time_new.log" | head
grep -E "^TIME" "$o/time_new.log" | awk '{print $2, $3, $4}' | sed 's/,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8//; s/_k128//; s/_wgmma2_sk1//'
# Session 16 call 1 timed $C on the stages a CTA a tile (binaries of e096595) at 304, 336, 512: 590.98 + 603.94 + 752.10 us.
faster=$(grep -E "^TIME m=(304|336|512),.*routing=balanced" "$o/time_new.log" | grep "$C" | awk '{split($4, a, "="); s+=a[2]} END {print (s > 0 && s < 590.98 + 603.94 + 752.10) ? 1 : 0}')
echo "new faster at 304+336+512 ($C) than call 1's 1947.02 us: $faster"
if [ $trc = 0 ] && [ "$faster" = 1 ]; then
  left=$(( total - (SECONDS - t0) - 25 ))
  BIN=.carry BUDGET_S=$left bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$o/tune_tail.txt" 2>&1
  echo "tune rc=$? $((SECONDS - t0)) s"
  grep -E "rc=|skewed|key done|^\[" "$OUT/glm5.tune.log" | cut -c1-150 | tail -30
  grep -E "^  M=" "$OUT/glm5.tune.log" | grep -c wgmma2 | sed 's/^/rows on wgmma2: /'
  if grep -q "^rc=0" "$OUT/glm5.tune.log" && [ $(( total - (SECONDS - t0) )) -gt 100 ]; then
    TABLES=build/glm5 OUT=$o/b PARTS=moe timeout $(( total - (SECONDS - t0) - 10 )) bash scripts/bench_fp8_moe.sh > "$o/bench.out" 2>&1
    echo "bench moe rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$o/bench.out" | tail -n 30
  fi
fi
tar czf "$OUT/c2.tgz" -C "$OUT" c2 && rm -rf "$o"
echo "total $((SECONDS - t0)) s"
