#!/usr/bin/env bash
# Session 25, call 1: the profile tune resumed from runs/glm5.db.gz (session 24 call 3's partial database, d56240a's
# binaries) until it finishes; then, in the same call, issue 6's benchmark on its tables against the library
# baselines (PARTS=fp8, and moe too when the MoE tables changed); then tma2's split-K against split-K 1 with the
# timing tool (what split-K's finish costs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
end=${END_S:-585}
rm -f build/glm5.db
BIN=.carry BUDGET_S=${TUNE_S:-400} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_tail.txt" 2>&1
rc=$?
echo "tune rc=$rc $((SECONDS - t0)) s"; grep -E "gaps|^rc=" "$OUT/glm5.tune.log" | tail -n 4 | cut -c1-200
parts=fp8
for f in runs/glm5/tuned_fmoe.csv runs/glm5/E=*\].json; do
  [ -f "$f" ] || continue
  cmp -s "$f" "build/glm5/$(basename "$f")" || { echo "changed: $(basename "$f")"; parts="fp8 moe"; }
done
if [ $rc -eq 0 ] && [ $((end - (SECONDS - t0))) -ge 120 ]; then
  BIN=.carry TABLES=build/glm5 OUT=$OUT/b PARTS="$parts" timeout $((end - 40 - (SECONDS - t0))) bash scripts/bench_fp8_moe.sh > "$OUT/bench.out" 2>&1
  echo "bench ($parts) rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$OUT/bench.out" | head -n 80
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
left=$((end - (SECONDS - t0)))
if [ $left -ge 30 ]; then
  spec="336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk2,m128n96k128_w64x96_s4_tma2_sk4"
  spec="$spec;128,512,6144:m64n64k128_w64x64_s4_tma2_sk1,m64n64k128_w64x64_s4_tma2_sk4,m64n64k128_w64x64_s4_tma2_sk8"
  spec="$spec;256,6144,2048:m128n96k128_w64x96_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk2"
  TUNETAB_TIME_FP8="$spec" timeout $((left - 5)) .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/splitk_time.log" 2>&1
  echo "time rc=$? $((SECONDS - t0)) s"
  grep -E "^TIME|Failure|FAILED" "$OUT/splitk_time.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/k128_w/_w/'
fi
echo "total $((SECONDS - t0)) s"
