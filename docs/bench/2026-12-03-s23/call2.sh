#!/usr/bin/env bash
# Session 23, call 2: where the FP8 stream-K kernel's time goes at 336 x 3072 x 6144 (call 1: 32.1 us against tma2's
# 25.5). ncu (stall reasons, source counters, SpeedOfLight, memory) of the first (validation) launch of tma2's
# exported m64n192 and of stream-K m128n128 and m64n256; source pages as CSV for scripts/ncu_stalls.py. Then the
# final binaries (.carry_f: stream-K reverted, gemm_fp8::workspace_bytes kept): GemmFp8Gpu, and gpu_check's e2e and
# safety parts.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
o=$OUT/c2; mkdir -p "$o"
sec=(--section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis
     --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum')
for cfg in m64n192k128_w64x192_s4_tma2_sk1 m128n128k128_w64x128_s4_streamk_p132_sk1 m64n256k128_w64x128_s4_streamk_p132_sk1; do
  TUNETAB_TIME_FP8="336,3072,6144:$cfg" timeout 120 ncu --clock-control none -k regex:gemm_fp8 -c 1 "${sec[@]}" -o "$o/rep_$cfg" \
    .carry/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.TimeConfigs*' > "$o/prof_$cfg.log" 2>&1
  echo "prof $cfg rc=$? $((SECONDS - t0)) s"
  ncu --import "$o/rep_$cfg.ncu-rep" --print-details all > "$o/details_$cfg.txt" 2>&1
  ncu --import "$o/rep_$cfg.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$o/src_$cfg.csv.gz"
  rm -f "$o/rep_$cfg.ncu-rep"
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|lts__t_sectors_srcunit_tex_op_read.sum|dram__bytes_read.sum|issue_stalled_.*ratio" "$o/details_$cfg.txt" | \
    awk '/ratio/ {if ($NF + 0 >= 0.2) print; next} {print}'
  python3 scripts/ncu_stalls.py "$o/src_$cfg.csv.gz" 12 2>&1 | head -n 45
done
tar czf "$OUT/c2.tgz" -C "$OUT" c2 && rm -rf "$o"
.carry_f/tunetab_gpu_tests --gtest_filter='GemmFp8Gpu.*:-GemmFp8Gpu.TimeConfigs*' > "$OUT/fp8_tests_f.log" 2>&1
echo "GemmFp8Gpu (final) rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$OUT/fp8_tests_f.log" | head -n 20
left=$(( ${END_S:-585} - (SECONDS - t0) ))
if [ $left -ge 190 ]; then
  BIN=.carry_f PARTS="e2e safety" timeout $((left - 5)) bash scripts/gpu_check.sh > "$OUT/gpu_check.out" 2>&1
  echo "gpu_check rc=$? $((SECONDS - t0)) s"; tail -n 15 "$OUT/gpu_check.out"
fi
echo "total $((SECONDS - t0)) s"
