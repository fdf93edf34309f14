#!/usr/bin/env bash
# Session 22, call 1: wgmma2 tiles of two 96-token groups (m192w96), wide tiles for blocks whose second group is
# padding only (binary .carry, this session's working tree). Correctness (MoeGpu), the pipeline timed against the
# configs the M=512 row chose between in session 21 (same binary: their code path is unchanged), ncu per kernel.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
.carry/tunetab_gpu_tests --gtest_filter='MoeGpu.*:MoeGpuConfigs.*:-MoeGpu.TimeConfigs*' > "$OUT/moe_gpu.log" 2>&1
echo "MoeGpu rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" "$OUT/moe_gpu.log" | head -12
G4=fp8_m192w96_n64x64_k128_s4_wgmma2_sk1; G3=fp8_m192w96_n64x64_k128_s3_wgmma2_sk1
W=fp8_m96w96_n128x128_k128_s4_wgmma2_sk1; E4=fp8_m64w64_n128x256_k128_s4_wgmma2_sk1; H=fp8_m128w64_n64x128_k128_s4_wgmma2_sk1
all="$G4,$G3,$W,$E4,$H"
spec="128:$all;256:$all;257:$all;304:$all;336:$all;384:$all;512:$all;1024:$all;336,skewed:$all;512,skewed:$all"
TUNETAB_TIME_MOE="$spec" timeout 200 .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$OUT/time.log" 2>&1
echo "time rc=$? $((SECONDS - t0)) s"
python3 scripts/moe_times.py "new=$OUT/time.log" | tee "$OUT/times.txt"
grep -E "unsupported|Failure|FAILED" "$OUT/time.log" | head -5
for mc in "336:$G4" "512:$G4"; do
  f="$OUT/ncu_$(echo "${mc%%:*}" | tr , _)_$(echo "${mc#*:}" | cut -d_ -f2-3).csv"
  TUNETAB_TIME_MOE="$mc" timeout 60 ncu --clock-control none --cache-control none -k regex:moe_ --launch-skip 6 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed --csv \
    .carry/tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*' > "$f" 2>&1
  echo "== ncu $mc rc=$? $((SECONDS - t0)) s"
  python3 scripts/ncu_table.py "$f"
done
tar czf "$OUT/ncu.tgz" -C "$OUT" $(cd "$OUT" && ls ncu_*.csv) && rm -f "$OUT"/ncu_*.csv
echo "total $((SECONDS - t0)) s"
