#!/usr/bin/env bash
# Session 16, call 3 (binaries of e42446c, the machine call 2 left warm), run as one command line from the repository
# root: the profile tune resumed (call 2's script skipped it: its pattern missed the timing lines), then the MoE half of
# issue 6's benchmark on the exported tables.
t0=$SECONDS; BIN=.carry BUDGET_S=470 bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > $OUT/tune_tail.txt 2>&1; echo "tune rc=$? $((SECONDS-t0)) s"; grep -E "rc=|skewed|key done|^\[|^  M=" $OUT/glm5.tune.log | cut -c1-160 | tail -32; if grep -q "^rc=0" $OUT/glm5.tune.log && [ $((SECONDS-t0)) -lt 470 ]; then TABLES=build/glm5 OUT=$OUT/b PARTS=moe timeout $((560-(SECONDS-t0))) bash scripts/bench_fp8_moe.sh > $OUT/bench.out 2>&1; echo "bench rc=$? $((SECONDS-t0)) s"; grep -E "^\|" $OUT/bench.out | tail -n 30; tar czf $OUT/bench.tgz -C $OUT b bench.out && rm -rf $OUT/b; fi
