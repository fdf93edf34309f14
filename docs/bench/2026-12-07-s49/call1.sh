#!/usr/bin/env bash
# Session 49, call 1 (carry .carry, .carry_x: ab.tgz packs .carry_ab/old (main's gpu tests) and .carry_ab/e (branch
# s48-oob2's tunetab and gpu tests)). First session 48's call 4 (old against E at M 304 and the 336 control, then the
# ragged-shape test on tma4 with E). Then:
# - on an H200: issue 6's re-tune from runs/glm5.db.gz and its benchmark (docs/bench/2026-12-06-s46/next.sh) with E's
#   binaries if, by the rule fixed before this call, E's geomean over the pairs is <= 0.99, its mean over the 336
#   control pairs <= 1.01 and its ragged test passes; with main's (.carry) otherwise.
# - on any other GPU: E's GemmFp8Gpu.* on the tma4 configs through gpu_check (E has not run on a GPU before; the e2e part is BF16's).
# Outputs: ab4.tgz, ragged_tma4_e.log, then glm5.* and bench.tgz, or gpu_check.tgz.
#   usage: OUT=... bash docs/bench/2026-12-07-s49/call1.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
bash docs/bench/2026-12-07-s48/call4.sh | tee "$OUT/call4.out"
ragged=$(grep -o 'ragged tma4 (E): rc=[0-9]*' "$OUT/call4.out")
tar xzf "$OUT/ab4.tgz" -C /tmp
verdict=$(python3 - /tmp/ab4 <<'PY'
import re, sys, collections, math
t = collections.defaultdict(dict)
for r in ("old1", "e1", "old2", "e2"):
    for line in open(f"{sys.argv[1]}/{r}.log"):
        m = re.match(r"TIME m=(\d+),n=(\d+),k=(\d+)\S* (\S+) median_us=([\d.]+)", line)
        if m: t[(m[1], m[2], m[3], m[4])][r] = float(m[5])
all_, c336 = [], []
for k, v in t.items():
    if len(v) < 4: continue
    q = math.log((v["e1"] + v["e2"]) / (v["old1"] + v["old2"]))
    all_.append(q)
    if k[0] == "336": c336.append(q)
g, c = math.exp(sum(all_) / max(len(all_), 1)), math.exp(sum(c336) / max(len(c336), 1))
print(f"{'E' if len(all_) >= 30 and g <= 0.99 and c <= 1.01 else 'main'} geomean {g:.3f} over {len(all_)}, 336 control {c:.3f} over {len(c336)}")
PY
)
[[ $ragged == *rc=0 ]] || verdict="main (E's ragged test: $ragged) ${verdict#* }"
echo "verdict: $verdict ($((SECONDS - t0)) s)"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
if [[ $gpu == *H200* ]]; then
  bin=.carry; [[ $verdict == E* ]] && bin=.carry_ab/e
  echo "H200: the re-tune with BIN=$bin"
  BIN=$bin TOTAL_S=$((585 - (SECONDS - t0))) TUNE_ARGS="--families gemm_fp8_blockscale --sweep-rows 257-352" \
    bash scripts/tune_and_bench.sh profiles/glm-5-fp8-ep8-h200.cfg glm5
else
  TUNETAB_FP8_ONLY=tma4 BIN=.carry_ab/e PARTS="gpu" GPU_TESTS='GemmFp8Gpu.*' STEP_TIMEOUT=$((575 - (SECONDS - t0))) \
    bash scripts/gpu_check.sh
fi
echo "total $((SECONDS - t0)) s"
