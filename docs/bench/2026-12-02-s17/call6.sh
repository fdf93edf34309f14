#!/usr/bin/env bash
# Session 17, call 6 (same warm machine as call 5), one command line: call 5's benchmark ran without BIN and so
# found no tunetab binary (.carry was not carried); this reruns the MoE half on call 5's tables with the candidate's.
BIN=.carry_nc TABLES=build/glm5 OUT=$OUT/b PARTS=moe timeout 150 bash scripts/bench_fp8_moe.sh > $OUT/bench.out 2>&1; echo rc=$?; grep -E "^\|" $OUT/bench.out | tail -n 24; tar czf $OUT/b.tgz -C $OUT b && rm -rf $OUT/b
