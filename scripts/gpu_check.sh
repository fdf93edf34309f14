#!/usr/bin/env bash
# Every GPU test plus a small end-to-end tune, on the device machine (binaries from scripts/build_device.sh).
# Prints a summary last; logs and the exported table go to $OUT (or ./out). On a fresh machine it all takes
# more than one device call (10 minutes): PARTS picks the parts (default "unit gpu e2e safety"), GPU_TESTS=<gtest
# filter> limits the gpu part, SAFETY=0 drops the safety part. Two calls that cover everything:
#   PARTS="unit gpu" GPU_TESTS='GemmFp8Gpu.*:MoeGpu.*:MoeGpuConfigs.*'
#   PARTS="gpu e2e safety" GPU_TESTS='GemmGpu.*:ValidateGpu.*'
# Measured on the H200 (sessions 11-13, warm compile cache aside): unit 3 s, GemmFp8Gpu.* 230 s (293 s in session 35,
# its ragged-shape test 227 s), MoeGpu.* 60-120 s, GemmGpu.* 200 s, e2e 115 s, safety 85 s; a cold machine's start adds
# about 110 s to a call.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.carry}
# NOTE: the device tool returns at most 8 files from $OUT: the logs go to $OUT/gpu_check/ and come back as one
# tar, written on exit (a call's time limit included) next to the summary.
out=${OUT:-out}/gpu_check
summary=""
mkdir -p "$out"
finish() {
  trap - EXIT TERM INT
  printf '%s' "$summary" > "$out/summary.txt"
  tar czf "$out.tgz" --exclude="*.db" -C "$(dirname "$out")" gpu_check
}
trap finish EXIT
trap 'finish; exit 143' TERM INT
status=0
step() {  # step NAME command...
  local name=$1
  shift
  local t0=$SECONDS
  # NOTE: a bound per step: an in-process GPU test that hangs must not take the whole device call.
  if timeout "${STEP_TIMEOUT:-900}" "$@" >"$out/$name.log" 2>&1; then r=ok; else r=FAILED; status=1; fi
  summary+=$(printf '%-10s %-7s %4ss  %s' "$name" "$r" $((SECONDS - t0)) "$(tail -n 1 "$out/$name.log")")$'\n'
}
parts=" ${PARTS:-unit gpu e2e safety} "
[ "${SAFETY:-1}" != 0 ] || parts=${parts/ safety / }
want() { [[ $parts == *" $1 "* ]]; }
"$bin/tunetab" devices | tee "$out/devices.log"
if want unit; then step unit "$bin/tunetab_unit_tests" --gtest_brief=1; fi
if want gpu; then step gpu "$bin/tunetab_gpu_tests" --gtest_filter="${GPU_TESTS:-*}"; fi
if want e2e; then
shapes="1,3072,1536;16,6144,2048;304,3072,1536;336,3072,6144;1024,6144,2048"
# A smoke run: domain M 1..8192, every M up to 2048 then sampled (the defaults, 32768 and 16384, are the product's).
cover="--m-max 8192 --every-m 2048"
step tune "$bin/tunetab" tune --db "$out/e2e.db" --shapes "$shapes" $cover --export "$out/e2e_bf16_tuned_gemm.csv" --no-progress
step resume "$bin/tunetab" tune --db "$out/e2e.db" --shapes "$shapes" $cover --no-progress
# A resume of a finished tune runs no candidate again: its run (the second, finished) stores no result (a final
# re-timed would be one).
step resume-idle python3 -c "import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
runs = c.execute('SELECT id, status FROM runs ORDER BY id').fetchall()
n = c.execute('SELECT count(*) FROM results WHERE run_id = ?', (runs[-1][0],)).fetchone()[0]
print(f'runs {runs}; results stored by the resume: {n}')
sys.exit(len(runs) != 2 or runs[-1][1] != 'finished' or n != 0)" "$out/e2e.db"
step export "$bin/tunetab" export --db "$out/e2e.db" -o "$out/e2e_reexport.csv"
step same cmp "$out/e2e_bf16_tuned_gemm.csv" "$out/e2e_reexport.csv"
step verify "$bin/tunetab" verify --table "$out/e2e_bf16_tuned_gemm.csv" --cert "$out/e2e_bf16_tuned_gemm.csv.cert.json"
fi
# Safety engine: its GPU tests (their own binary: it forks device workers first), then the planted-fault demo:
# five planted faults (tail store for ragged M, 32-bit offsets wrapping past 2^31 elements, a hang, a skipped
# tile, a wrong result) beside good configs; each must be caught with its disposition while the run goes on
# and the good configs give a complete certified table, which verify re-validates.
if want safety; then
step safety "$bin/tunetab_safety_gpu_tests"
planted_shapes="300,1024,64;1048704,2048,8"
step planted "$bin/tunetab" tune --plant-faults --db "$out/planted.db" --shapes "$planted_shapes" --m-max 1048704 \
  --timeout-ms 2000 --top 2 --export "$out/planted_bf16_tuned_gemm.csv" --no-progress
step planted-resume "$bin/tunetab" tune --plant-faults --db "$out/planted.db" --shapes "$planted_shapes" --m-max 1048704 \
  --timeout-ms 2000 --top 2 --no-progress
step planted-verify "$bin/tunetab" verify --table "$out/planted_bf16_tuned_gemm.csv" \
  --cert "$out/planted_bf16_tuned_gemm.csv.cert.json" --timeout-ms 2000
fi
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/gpu.log" 2>/dev/null || true
sed -n '/^M /,$p' "$out/tune.log" 2>/dev/null
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/safety.log" 2>/dev/null || true
sed -n '/^M /,$p' "$out/planted.log" 2>/dev/null
echo "---- gpu_check summary ----"
printf '%s' "$summary"
exit $status
