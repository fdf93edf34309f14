#!/usr/bin/env bash
# Issue 6's acceptance in device calls of at most 10 minutes: scripts/tune_profile.sh (a bounded, resumable call of
# `tunetab tune --profile`; the database travels as runs/<name>.db.gz), then, once the tune ends with rc 0 (every
# table exported and gaps: none), scripts/bench_fp8_moe.sh on the exported tables in the same call, so that tunetab's
# rows and the library baselines are timed on the same GPU: both families if 150 s are left, else the dense FP8 only.
# Outputs in $OUT: <name>.tune.log, <name>.db.gz, <name>.tables.tgz, bench.tgz (copy the database back over
# runs/<name>.db.gz and commit it; call again while the log ends with rc=124).
#   usage: OUT=... bash scripts/tune_and_bench.sh PROFILE NAME   (env TOTAL_S=575: the call's seconds, BENCH_S=75: kept
#          for the benchmark, BIN=.carry, TUNE_ARGS)
set -uo pipefail
cd "$(dirname "$0")/.."
profile=${1:?usage: tune_and_bench.sh PROFILE NAME}
name=${2:?usage: tune_and_bench.sh PROFILE NAME}
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
total=${TOTAL_S:-575}
left() { echo $((total - (SECONDS - t0))); }
env BIN="${BIN:-.carry}" OUT="$out" BUDGET_S=$(($(left) - ${BENCH_S:-75})) TUNE_ARGS="${TUNE_ARGS:-}" \
  bash scripts/tune_profile.sh "$profile" "$name" > "$out/tune.tail" 2>&1
rc=$?
echo "tune rc=$rc at $((SECONDS - t0)) s"; grep -E "^\[|key done|^rc=|summary" "$out/$name.tune.log" | cut -c1-160
if [ $rc = 0 ] && [ "$(left)" -ge 60 ]; then
  parts=fp8; [ "$(left)" -ge 150 ] && parts="fp8 moe"
  timeout $(($(left) - 5)) env BIN="${BIN:-.carry}" OUT="$out/bench" TABLES="build/$name" PARTS="$parts" \
    bash scripts/bench_fp8_moe.sh > "$out/bench.out" 2>&1
  echo "bench ($parts) rc=$? at $((SECONDS - t0)) s"; grep -E "^Worst ratio|roofline" "$out/bench.out" | cut -c1-300
  cp "$out/bench.out" "$out/bench/" 2>/dev/null; tar czf "$out/bench.tgz" -C "$out" bench && rm -rf "$out/bench"
fi
echo "total $((SECONDS - t0)) s"
exit $rc
