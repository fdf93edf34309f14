#!/usr/bin/env bash
# Session 40, call 4. On an H200: call3.sh's timings (tma3 against tma4 and cuBLASLt; no ragged-shape test, no ncu:
# the tune validates every candidate it keeps), then session 38's call (the FP8 keys re-tuned with tma4 in the space,
# resumed from runs/glm5.db.gz, and the benchmark on the exported tables when the tune ends with rc 0). On another
# GPU: call3.sh.
#   usage: OUT=... bash docs/bench/2026-12-05-s40/call4.sh   (env TOTAL_S=570)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu != *H200* ]]; then
  echo "GPU: $gpu (not an H200): call3.sh"; exec bash docs/bench/2026-12-05-s40/call3.sh
fi
echo "GPU: $gpu"
eval "$(sed -n '/^spec()/,/^}/p' docs/bench/2026-12-05-s40/call3.sh)"
TUNETAB_TIME_FP8="$(spec "tma3 tma4")" timeout 100 .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' \
  > "$OUT/time.tma3_tma4.log" 2>&1
echo "time rc=$? at $((SECONDS - t0)) s"
grep -h "^TIME\|Failure" "$OUT"/time.*.log | sed 's/,in=e4m3fn,out=bf16,scale=1x128x128//'
(cd bench && timeout 60 python3 fp8_baseline.py --shapes "$(grep -oE '"[0-9,;]+"' ../docs/bench/2026-12-05-s40/call3.sh | tr -d '"')" \
  --json "$OUT/cublaslt.json") > "$OUT/cublaslt.log" 2>&1
echo "cuBLASLt rc=$? at $((SECONDS - t0)) s"; tail -n 8 "$OUT/cublaslt.log"
TOTAL_S=$((${TOTAL_S:-570} - (SECONDS - t0))) bash docs/bench/2026-12-05-s38/call.sh
