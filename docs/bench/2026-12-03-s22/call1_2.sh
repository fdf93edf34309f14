#!/usr/bin/env bash
# Session 22, the first call made: call1.sh, then call2.sh (the tune, the benchmark) in what is left of the call if
# MoeGpu passed and the two-group 96-token tiles are faster than session 21's M=512 row config on average over the Ms
# that row serves (257, 384, 512: the tuner's rule).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
bash docs/bench/2026-12-03-s22/call1.sh
go=$(python3 - "$OUT" <<'PY'
import re, sys
log = open(f"{sys.argv[1]}/moe_gpu.log").read()
t = {}
for line in open(f"{sys.argv[1]}/time.log"):
    m = re.search(r"TIME m=(\d+),.*routing=balanced (\S+) median_us=([\d.]+)", line)
    if m: t[(int(m[1]), m[2])] = float(m[3])
mean = lambda c: sum(t.get((m, c), 1e9) for m in (257, 384, 512)) / 3
g, e = mean("fp8_m192w96_n64x64_k128_s4_wgmma2_sk1"), mean("fp8_m64w64_n128x256_k128_s4_wgmma2_sk1")
ok = "[  PASSED  ]" in log and "FAILED" not in log
print(f"mean 257/384/512: m192w96 {g:.1f} m64w64 {e:.1f} tests {'ok' if ok else 'FAILED'}", file=sys.stderr)
print(1 if ok and g < 0.98 * e else 0)
PY
)
echo "go=$go $((SECONDS - t0)) s"
if [ "$go" = 1 ]; then TUNE_S=$((560 - (SECONDS - t0))) END_S=$((585 - (SECONDS - t0))) bash docs/bench/2026-12-03-s22/call2.sh; fi
# At most 8 files come back: the logs in one tar.
(cd "$OUT" && tar czf logs.tgz $(ls moe_gpu.log time.log times.txt tune_tail.txt glm5.tune.log bench.out 2>/dev/null) && \
  rm -f moe_gpu.log time.log times.txt tune_tail.txt glm5.tune.log bench.out)
echo "call total $((SECONDS - t0)) s"
