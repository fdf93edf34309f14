#!/usr/bin/env bash
# Session 47, call 1 (any GPU; `.carry` = this session's build, with TUNETAB_TIME_OUTPUT): does the dense benchmark
# treat the two outputs alike? tunetab's timing gives each rotating input set its own output; the torch baseline
# lets torch allocate each call's output inside the graph's capture (out_probe.py: where those land). The issue 6
# FP8 benchmark on this GPU's tables (runs/glm5-h100, or runs/glm5 on an H200) three ways, in one call:
#   A  tunetab outputs rotate, baseline allocates   (the method of sessions 37-46)
#   B  both rotate                                   (TUNETAB_BASELINE_OUT=rotate)
#   C  tunetab one output, baseline allocates        (TUNETAB_TIME_OUTPUT=one)
# then A/B of the candidate tiles at 304 / 336 x 4096 x 2048 in both tunetab modes. Outputs: A/, B/, C/ (bench logs),
# probe.txt, tiles_rot.log, tiles_one.log.
#   usage: OUT=... bash docs/bench/2026-12-06-s47/call1.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=docs/bench/2026-12-06-s47
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
tables=runs/glm5-h100; [[ $gpu == *H200* ]] && tables=runs/glm5  # each GPU's own tune
echo "tables: $tables"
python3 $here/out_probe.py 2>&1 | tee "$OUT/probe.txt"
M=${M:-1,16,64,128,256,304,336,512,1024,2048,4096}
run() {  # name, env...
  local name=$1; shift
  mkdir -p "$OUT/$name"
  env "$@" OUT="$OUT/$name" PARTS=fp8 TABLES=$tables M=$M bash scripts/bench_fp8_moe.sh > "$OUT/$name/bench.out" 2>&1
  echo "$name ($*): rc=$? $(head -2 "$OUT/$name/bench.out" | paste -sd' ')"
  rm -f "$OUT/$name/fp8_baseline.log"
}
run A TUNETAB_BASELINE_OUT=alloc
run B TUNETAB_BASELINE_OUT=rotate
run C TUNETAB_TIME_OUTPUT=one
tiles="m64n192k128_w64x96_s6_tma4_c2,m128n128k128_w64x128_s6_tma4,m128n128k128_w64x128_s6_tma4_cn2,m128n128k128_w64x128_s6_tma4_cn4,m128n96k128_w64x96_s6_tma3,m128n96k128_w64x96_s6_tma4"
spec="304,4096,2048:$tiles;336,4096,2048:$tiles"
for mode in rot one; do
  o=; [ $mode = one ] && o=one
  TUNETAB_TIME_OUTPUT=$o TUNETAB_TIME_FP8="$spec" .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$OUT/tiles_$mode.log" 2>&1
  echo "tiles ($mode): rc=$?"; grep "^TIME" "$OUT/tiles_$mode.log"
done
for name in A B C; do echo "== $name"; grep -E "^\| (304|336|256|128) \| (4096|6144) \| (2048|1536)" "$OUT/$name/report6.md"; grep -E "^Worst ratio" "$OUT/$name/report6.md"; done
