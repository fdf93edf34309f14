#!/usr/bin/env bash
# Session 46, call 3 (`.carry` = the build with the tune's "code objects:" line): gpu_check's e2e part, then
# runs/glm5-h100.db.gz resumed twice in place with `tunetab tune --profile` (not tune_profile.sh, which drops the
# database's compile cache before it returns it): the first resume compiles the code it needs, the second finds it in
# the cache; both must store no result. Then gpu_check's unit and safety parts. Outputs: gpu_check.tgz (the last
# parts'; e2e's summary is printed), idle1.log, idle2.log.
#   usage: OUT=... bash docs/bench/2026-12-06-s46/call3.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
OUT=$OUT PARTS="e2e" bash scripts/gpu_check.sh 2>&1 | sed -n '/gpu_check summary/,$p'
grep -h "code objects" "$OUT"/gpu_check/tune.log "$OUT"/gpu_check/resume.log
gunzip -c runs/glm5-h100.db.gz > /tmp/r.db
count() { python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(*c.execute('SELECT (SELECT max(id) FROM runs), (SELECT count(*) FROM results)').fetchone())" /tmp/r.db; }
for i in 1 2; do
  before=$(count); t0=$SECONDS
  .carry/tunetab tune --profile profiles/glm-5-fp8-ep8-h200.cfg --db /tmp/r.db --export-dir /tmp/idle$i --no-progress > "$OUT/idle$i.log" 2>&1
  echo "idle resume $i: rc=$? in $((SECONDS - t0)) s; (last run, results) before: $before, after: $(count)"
  grep -E "code objects|key done" "$OUT/idle$i.log" | paste -sd' ' | cut -c1-2000
done
OUT=$OUT PARTS="unit safety" bash scripts/gpu_check.sh 2>&1 | sed -n '/gpu_check summary/,$p'
