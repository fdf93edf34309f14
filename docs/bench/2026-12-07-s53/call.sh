#!/usr/bin/env bash
# Session 53, after ov2's merge (`ba8621e`; `.carry` = main's static build, byte-identical to the binaries call 2
# measured and tuned with).
# - on an H200: docs/bench/2026-12-06-s46/next.sh (issue 6's acceptance: the H200 FP8 keys re-tuned from
#   runs/glm5.db.gz, then the benchmark on its tables in the same call; call again while the tune log ends rc=124).
# - on any other GPU: scripts/gpu_check.sh on the merged build: unit, every FP8 GPU test (all configs, the ragged-shape
#   test included), the end-to-end tune with its resumes, re-export and verify, and the safety part (planted faults).
#   GemmGpu.*, MoeGpu.* and ValidateGpu.* run code ov2 did not touch (session 50's call 16 and earlier ran them).
#   usage: OUT=... [TOTAL_S=575] [PARTS="unit gpu e2e safety"] bash docs/bench/2026-12-07-s53/call.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
[[ $gpu == *H200* ]] && exec env TOTAL_S=${TOTAL_S:-575} bash docs/bench/2026-12-06-s46/next.sh
t0=$SECONDS
PARTS=${PARTS:-"unit gpu e2e safety"} GPU_TESTS='GemmFp8Gpu.*' STEP_TIMEOUT=${STEP_TIMEOUT:-240} bash scripts/gpu_check.sh
echo "rc=$? total $((SECONDS - t0)) s"
