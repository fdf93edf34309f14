#!/usr/bin/env bash
# Session 37's device calls, one H200 kept warm between them (carry .carry = main's build, .carry_h = the
# s36-moe-halves branch's tunetab and tunetab_gpu_tests). The second and third calls follow the first's verdict,
# which it leaves in build/s37/verdict on the machine, so each call can be issued the moment the last ends.
#   CALL=1: the A/B of the branch (../2026-12-05-s36/moe_halves_ab.sh: MoeGpu.* on it, then the pipeline timed on both
#           binaries, alternating), then the FP8 benchmark of runs/glm5/ against cuBLASLt (bench_fp8_moe.sh PARTS=fp8).
#           Verdict "merge" when the branch's MoE GPU tests pass and its best new tile beats main's 257..512 row
#           (m64w64_n128x256_s4) at 304 and 336 under both routings and over the row's nine Ms (balanced), else "keep".
#   CALL=2: merge: the fused-MoE key re-tuned on the branch (its wgmma2 verdicts are re-keyed), then the whole profile.
#           keep: gpu_check's unit, MoE GPU tests, e2e tune and safety parts on main.
#   CALL=3: merge: the tune resumed, then the MoE benchmark on its tables. keep: gpu_check's FP8, bf16, validation tests.
# The first call's verdict was "keep" (the 257..512 row), but the new tile beat main's m96w96_n128x128_s4 at every M
# from 257 to 1024 (0.95x at 1024): merged, so the later calls ran the merge path with VERDICT=merge.
#   usage: OUT=... CALL=1|2|3 bash docs/bench/2026-12-05-s37/call.sh   (env TOTAL_S=570, VERDICT)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
total=${TOTAL_S:-570}
left() { echo $((total - (SECONDS - t0))); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $gpu"
mkdir -p build/s37
case ${CALL:-1} in
1)
  OUT=$OUT TOTAL_S=$(($(left) - 190)) bash docs/bench/2026-12-05-s36/moe_halves_ab.sh > "$OUT/ab.out" 2>&1
  tail -n 25 "$OUT/ab.out"
  python3 - "$OUT" > build/s37/verdict <<'PY'
import re, sys, statistics
d = sys.argv[1]
log = open(f"{d}/moe_gpu_h.log").read()
ok = "[  PASSED  ]" in log and "FAILED" not in log
t = {}
for v in ("main", "h"):
    for rep in (1, 2):
        try: s = open(f"{d}/time_{v}_{rep}.log").read()
        except OSError: continue
        for x in re.finditer(r"TIME m=(\d+),\S*routing=(\w+) fp8_(\S+)_k128_(s\d)_wgmma2_sk1 median_us=([\d.]+)", s):
            t.setdefault((int(x[1]), x[2]), {}).setdefault(f"{v}:{x[3]}_{x[4]}", []).append(float(x[5]))
row, new = "main:m64w64_n128x256_s4", ["h:m96w96_n128x256_s3", "h:m96w96_n128x256_s4"]
def mean(m, r, c):
    v = t.get((m, r), {}).get(c)
    return statistics.mean(v) if v else float("inf")
wins = all(min(mean(m, r, c) for c in new) < mean(m, r, row) for m in (304, 336) for r in ("balanced", "skewed"))
bucket = [257, 288, 320, 352, 384, 416, 448, 480, 512]
best = min(statistics.mean(mean(m, "balanced", c) for m in bucket) for c in new)
wins = wins and best < statistics.mean(mean(m, "balanced", row) for m in bucket)
print("merge" if ok and wins else "keep")
PY
  echo "verdict: $(cat build/s37/verdict)"
  cp build/s37/verdict "$OUT/verdict"
  if [[ $gpu == *H200* ]]; then
    timeout $(($(left) - 5)) env BIN=.carry OUT="$OUT/b" PARTS=fp8 bash scripts/bench_fp8_moe.sh > "$OUT/bench_fp8.out" 2>&1
    echo "bench fp8 rc=$? at $((SECONDS - t0)) s"; grep "^Worst ratio" "$OUT/bench_fp8.out" | cut -c1-300
  fi
  ;;
2 | 3)
  verdict=${VERDICT:-$(cat build/s37/verdict 2>/dev/null || echo none)}  # VERDICT=merge: on a fresh machine
  echo "verdict: $verdict"
  if [ "$verdict" = merge ] && [[ $gpu != *H200* ]]; then
    # The database holds the H200's rows (tune_profile.sh refuses another GPU): the A/B on this GPU instead.
    OUT=$OUT TOTAL_S=$(($(left) - 10)) bash docs/bench/2026-12-05-s36/moe_halves_ab.sh > "$OUT/ab.out" 2>&1
    tail -n 25 "$OUT/ab.out"
  elif [ "$verdict" = merge ]; then
    tune() {  # $1: label; the rest: tune_profile.sh's env
      env BIN=.carry_h OUT="$OUT" "${@:2}" bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > "$OUT/tune_$1.tail" 2>&1
      local rc=$?
      cp "$OUT/glm5.tune.log" "$OUT/tune_$1.log"
      echo "tune $1 rc=$rc at $((SECONDS - t0)) s"; grep -E "key done|gaps|^rc=" "$OUT/tune_$1.log" | tail -n 8 | cut -c1-200
      return $rc
    }
    tune moe BUDGET_S=$(($(left) - 30)) TUNE_ARGS="--families fused_moe"
    rc=1
    if [ "$(left)" -ge 90 ]; then tune all BUDGET_S=$(($(left) - 15)); rc=$?; fi
    if [ $rc = 0 ] && [ "$(left)" -ge 70 ]; then
      timeout $(($(left) - 5)) env BIN=.carry_h OUT="$OUT/b" TABLES=build/glm5 PARTS=moe bash scripts/bench_fp8_moe.sh \
        > "$OUT/bench_moe.out" 2>&1
      echo "bench moe rc=$? at $((SECONDS - t0)) s"
    fi
  else
    if [ "$CALL" = 2 ]; then parts="unit gpu e2e safety" tests='MoeGpu.*:MoeGpuConfigs.*'
    else parts="gpu" tests='GemmFp8Gpu.*:GemmGpu.*:ValidateGpu.*'; fi
    BIN=.carry PARTS=$parts GPU_TESTS=$tests STEP_TIMEOUT=$(($(left) - 15)) timeout $(($(left) - 5)) bash scripts/gpu_check.sh 2>&1 |
      tail -n 20
  fi
  ;;
esac
echo "total $((SECONDS - t0)) s"
