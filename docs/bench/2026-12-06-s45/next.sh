#!/usr/bin/env bash
# For the next session's first device call (`.carry` = a build with schema 4, `screen_us`: session 45's `44b1fa7` or
# later). On an H200: issue 6's acceptance there (the H200 FP8 re-tune from runs/glm5.db.gz and the benchmark, as
# session 44's next.sh). On an H100: gpu_check's unit and e2e parts (its `resume-idle` step is new: a resume of a
# finished tune stores no result), then runs/glm5-h100.db.gz resumed twice with every family. Its finals from before
# schema 4 have no screening median, so the first resume may still re-time some finalists; the second must re-time none
# ("results stored by them: 0"). Outputs: gpu_check.tgz, glm5-h100*.log, glm5-h100.db.gz.
#   usage: OUT=... bash docs/bench/2026-12-06-s45/next.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
if [[ $gpu == *H200* ]]; then
  TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5
  exit
fi
[[ $gpu == *H100* ]] || { echo "neither an H200 nor an H100: stopped"; exit 1; }
OUT=$OUT PARTS="unit e2e" bash scripts/gpu_check.sh 2>&1 | sed -n '/gpu_check summary/,$p'
# NOTE: `tune --profile` starts a run per key: a resume is every run after the last one before it.
stored() {  # stored DB LAST: the runs after LAST and the results they stored; prints the newest run id last
  python3 -c "import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); last = int(sys.argv[2])
runs = c.execute('SELECT count(*), max(id) FROM runs WHERE id > ?', (last,)).fetchone()
n = c.execute('SELECT count(*) FROM results WHERE run_id > ?', (last,)).fetchone()[0]
print(f'{runs[0]} runs, results stored by them: {n}'); print(runs[1] or last)" "$1" "$2"
}
gunzip -c runs/glm5-h100.db.gz > /tmp/glm5-h100.db
last=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT max(id) FROM runs').fetchone()[0])" /tmp/glm5-h100.db)
for i in 1 2; do
  BUDGET_S=${RESUME_S:-200} bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5-h100 > /dev/null 2>&1
  echo "resume $i: $(tail -n 1 "$OUT/glm5-h100.tune.log")"
  cp "$OUT/glm5-h100.tune.log" "$OUT/glm5-h100.resume$i.log"
  gunzip -c "$OUT/glm5-h100.db.gz" > /tmp/glm5-h100.db
  out=$(stored /tmp/glm5-h100.db "$last") && echo "resume $i: $(head -n 1 <<<"$out")" && last=$(tail -n 1 <<<"$out")
done
