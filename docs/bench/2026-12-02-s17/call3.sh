#!/usr/bin/env bash
# Session 17, call 3: where the persistent wgmma2 MoE stages' time goes at M=336 (balanced): the stall reasons and the
# stalled SASS instructions (ncu source page, read by scripts/ncu_stalls.py) of both stages of the exported M=512
# row's config (64 tokens a CTA) and of the 96-token config. Call 2 showed that the clusters (half the L2 reads of
# W) did not change stage 1's time.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$SECONDS
bin=.carry
o=$OUT/c3; mkdir -p "$o"
stall=(--section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis
       --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
prof() {  # name config
  local name=$1 cfg=$2
  TUNETAB_TIME_MOE="336:$cfg" timeout 150 ncu --clock-control none -k "regex:moe_stage" -c 2 "${stall[@]}" -o "$o/rep_$name" \
    "$bin/tunetab_gpu_tests" --gtest_filter='MoeGpu.TimeConfigs*' > "$o/prof_$name.log" 2>&1
  echo "prof $name rc=$? $((SECONDS - t0)) s"
  ncu --import "$o/rep_$name.ncu-rep" --print-details all > "$o/details_$name.txt" 2>&1
  ncu --import "$o/rep_$name.ncu-rep" --page source --csv --print-source sass | gzip > "$o/src_$name.csv.gz"
  rm -f "$o/rep_$name.ncu-rep"
  grep -E "^  void|Duration|DRAM Throughput|L2 Hit|issue_stalled_.*ratio" "$o/details_$name.txt" | sed 's/(MoeStageTmaArgs).*//' | \
    awk '/ratio/ {if ($NF + 0 >= 0.3) print; next} {print}'
}
prof m64 fp8_m64w64_n128x256_k128_s4_wgmma2_sk1
prof m96 fp8_m96w96_n128x128_k128_s4_wgmma2_sk1
echo "total $((SECONDS - t0)) s"
tar czf "$OUT/c3.tgz" -C "$OUT" c3 && rm -rf "$o"
