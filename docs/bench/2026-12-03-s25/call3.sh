#!/usr/bin/env bash
# Session 25, call 3 (15bb415's binaries): the profile tune resumed from runs/glm5.db.gz (call 2's partial re-judging
# of tma2 with split-K's own finish) until it finishes; then the dense FP8 half of issue 6's benchmark on its tables
# against cuBLASLt in the same call; then gpu_check's end-to-end tune and safety tests, each only if the step before
# it passed and the call has time left (END_S); between them an interleaved A/B of split-K 1 configs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-300} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
if [ $rc -eq 0 ] && [ $((end - (SECONDS - t0))) -ge 100 ]; then
  BIN=.carry TABLES=build/glm5 OUT=$OUT/b PARTS=fp8 timeout $((end - (SECONDS - t0))) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench rc=$? $((SECONDS - t0)) s"; grep -iE "ceilings" "$OUT/bench.out"
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
# Interleaved A/B of split-K 1 configs (call 2 timed .carry 0-11% slower than .carry_b, one binary after the other):
# .carry (15bb415) and .carry_b (c7acb88), alternating, two rounds, if time allows.
spec="4096,3072,6144:m128n192k128_w64x192_s4_tma2_sk1;2048,2048,2048:m128n128k128_w64x128_s4_tma2_sk1"
spec="$spec;336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1;4096,512,6144:m64n256k128_w64x128_s4_tma2_sk1"
for r in 1 2; do
  for b in .carry .carry_b; do
    [ $((end - (SECONDS - t0))) -ge 210 ] || continue
    TUNETAB_TIME_FP8="$spec" timeout 40 $b/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/ab_${r}${b#.carry}.log" 2>&1
    echo "ab round $r $b rc=$? $((SECONDS - t0)) s"
    grep -E "^TIME" "$OUT/ab_${r}${b#.carry}.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/'
  done
done
left=$((end - (SECONDS - t0)))
if [ $rc -eq 0 ] && [ $left -ge 180 ]; then
  BIN=.carry PARTS="e2e safety" timeout $left bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
  echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/gpu_check.out"
  rm -f "$OUT"/gpu_check/*.db
else
  echo "gpu_check skipped: $left s left"
fi
echo "total $((SECONDS - t0)) s"
