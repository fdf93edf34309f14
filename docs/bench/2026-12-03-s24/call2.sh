#!/usr/bin/env bash
# Session 24, call 2: the profile tune resumed from runs/glm5.db.gz (call 1's database, committed) until it
# finishes, then the dense FP8 half of issue 6's benchmark on its tables against cuBLASLt in the same call, then
# the changed rows' configs timed against session 21's, then gpu_check's end-to-end tune and safety tests on the same binaries, each only if the step before it passed and
# the call has time left (END_S).
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
  echo "bench rc=$? $((SECONDS - t0)) s"; grep -E "^\|" "$OUT/bench.out" | head -n 40
  tar czf "$OUT/b.tgz" -C "$OUT" b && rm -rf "$OUT/b"
fi
# The rows the re-tune changed at M <= 512: the new row's config against session 21's, same binary, same call;
# and two w96 tiles not in the config space yet (the timing tool takes any name the template instantiates):
# m64n96 (one consumer, two CTAs an SM) and m192n96 (three consumers).
X="m64n96k128_w64x96_s4_tma2_sk1,m192n96k128_w64x96_s4_tma2_sk1"
spec="512,2624,6144:m128n96k128_w64x96_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,$X"
spec="$spec;512,3072,6144:m128n128k128_w64x128_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk1,$X"
spec="$spec;256,6144,256:m128n96k128_w64x96_s4_tma2_sk1,m128n128k128_w64x128_s4_tma2_sk1,$X"
spec="$spec;256,6144,1536:m128n96k128_w64x96_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,$X"
spec="$spec;256,6144,2048:m128n96k128_w64x96_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,$X"
spec="$spec;336,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,$X"
spec="$spec;304,3072,6144:m128n96k128_w64x96_s4_tma2_sk1,m64n192k128_w64x192_s4_tma2_sk1,$X"
spec="$spec;336,4096,2048:m128n128k128_w64x128_s4_tma2_sk1,m128n96k128_w64x96_s4_tma2_sk1,$X"
spec="$spec;1024,4096,2048:m128n128k128_w64x128_s4_tma2_sk1,$X"
spec="$spec;2048,2048,2048:m128n128k128_w64x128_s4_tma2_sk1,$X"
TUNETAB_TIME_FP8="$spec" timeout 120 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/rows_time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
grep -E "^TIME|Failure|FAILED" "$OUT/rows_time.log" | sed -E 's/,in=e4m3fn,out=bf16,scale=1x128x128//; s/ min_us.*//; s/k128_w/_w/'
left=$((end - (SECONDS - t0)))
if [ $left -ge 200 ]; then
  BIN=.carry PARTS="e2e safety" timeout $left bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
  echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 12 "$OUT/gpu_check.out"
  rm -f "$OUT"/gpu_check/*.db
else
  echo "gpu_check skipped: $left s left"
fi
echo "total $((SECONDS - t0)) s"
