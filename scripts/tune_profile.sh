#!/usr/bin/env bash
# One bounded call of `tunetab tune --profile` on the GPU machine, resumable across calls (each call of the
# device tool gets at most 10 minutes and may start on a fresh machine): the database travels as
# runs/<name>.db.gz, committed (a session's untracked files do not outlive it), and comes back in $OUT beside
# the log and the exported tables (a tar of the export folder, tables and certificates). Copy the returned
# <name>.db.gz over runs/<name>.db.gz, commit it, and call again until the log ends with rc=0. A database
# left in build/ by the previous call on a still-warm machine is taken first.
#   usage: bash scripts/tune_profile.sh [PROFILE] [NAME]    (env: BIN=.carry, OUT, BUDGET_S=540, NEW_GPU=1, TUNE_ARGS, e.g.
#          "--families fused_moe" to tune one family's keys first; the export still writes every table, so the rc
#          stays 1 until the other families' rows are covered on this build's code too)
set -uo pipefail
cd "$(dirname "$0")/.."
profile=${1:-profiles/glm-5-fp8-ep8-h200.cfg}
name=${2:-glm5}
bin=${BIN:-.carry}
out=${OUT:-out}
budget=${BUDGET_S:-540}
mkdir -p "$out" build
db=build/$name.db
if [ ! -f "$db" ] && [ -f "runs/$name.db.gz" ]; then gunzip -c "runs/$name.db.gz" > "$db"; fi
# A resumed database holds one GPU's rows; on another GPU (the device tool may lend an H100 for an H200) the tune
# would start every row again, as that GPU's. Refused unless NEW_GPU=1.
here=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
if [ -f "$db" ] && [ -n "$here" ] && [ "${NEW_GPU:-0}" != 1 ]; then
  known=$(python3 -c "import sqlite3, sys; print('|'.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT DISTINCT name FROM devices')))" "$db")
  if [ -n "$known" ] && [[ "|$known|" != *"|$here|"* ]]; then
    echo "tune_profile: $db holds rows of $known, and this GPU is $here: not tuned (NEW_GPU=1 tunes it from the start)" \
      | tee "$out/$name.tune.log" >&2
    exit 3
  fi
fi
start=$(date +%s)
# shellcheck disable=SC2086  # TUNE_ARGS is a list of flags
timeout "$budget" "$bin/tunetab" tune --profile "$profile" --db "$db" --export-dir "build/$name" --no-progress ${TUNE_ARGS:-} \
  > "$out/$name.tune.log" 2>&1
rc=$?
why=""
[ "$rc" = 124 ] && why=" (the budget ran out; call again to resume)"
echo "rc=$rc wall=$(( $(date +%s) - start ))s$why" >> "$out/$name.tune.log"
# NOTE: the database is in WAL mode, and a tune killed by `timeout` leaves its last commits in $db-wal: merge them into
# the file before it is copied, or the next call (on a fresh machine) would tune them again.
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$db"
gzip -c "$db" > "$out/$name.db.gz"
if [ "$rc" = 0 ] || [ "$(stat -c %s "$out/$name.db.gz")" -gt 15000000 ]; then
  # NOTE: the copy is committed and travels with every device call (64 MiB in all), and the device tool returns
  # files up to 16 MiB: drop the compile cache once the tune is done (184 code objects of one family's re-tune were
  # 6 MB of a 13 MB database) or where it is too large; a later call recompiles what it needs (seconds a key).
  python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM code_objects'); c.commit(); c.execute('VACUUM')" "$db"
  gzip -c "$db" > "$out/$name.db.gz"
fi
if [ -d "build/$name" ]; then tar czf "$out/$name.tables.tgz" -C build "$name"; fi
tail -n 60 "$out/$name.tune.log"
exit $rc
