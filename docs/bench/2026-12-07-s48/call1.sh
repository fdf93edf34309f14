#!/usr/bin/env bash
# Session 48, call 1: on an H200, issue 6's acceptance run (docs/bench/2026-12-06-s46/next.sh: the FP8 re-tune from
# runs/glm5.db.gz, then the benchmark in the same call); on any other GPU, session 47's per-CTA study and early-fill A/B
# (docs/bench/2026-12-06-s47/call3.sh, about 30 s) and then the e2e part of gpu_check on `.carry` (session 46's tune
# mend `3e8bb6c` has had none).
#   usage: OUT=... bash docs/bench/2026-12-07-s48/call1.sh   (carry .carry and .carry_x: tl.tgz packs .carry_tl and .carry_tl2)
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then
  exec bash docs/bench/2026-12-06-s46/next.sh
fi
[ -d .carry_tl ] || tar xzf .carry_x/tl.tgz  # the two branch builds travel packed
mkdir -p "$OUT/cta" && OUT="$OUT/cta" bash docs/bench/2026-12-06-s47/call3.sh
tar czf "$OUT/cta.tgz" -C "$OUT" cta && rm -rf "$OUT/cta"
BIN=.carry PARTS="e2e" STEP_TIMEOUT=400 bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
echo "gpu_check rc=$?"; tail -n 5 "$OUT/gpu_check.out"
