# Session 21, call 3 (the machine still warm from call 2, whose build/glm5 held the finished tune's tables), one
# command line: the MoE half of issue 6's benchmark on those tables with .carry_q, then gpu_check's e2e and safety
# parts (safety failed to start: .carry_q lacked tunetab_safety_gpu_tests; call 4 ran it).
t0=$SECONDS; BIN=.carry_q TABLES=build/glm5 OUT=$OUT/b PARTS=moe timeout 200 bash scripts/bench_fp8_moe.sh > $OUT/bench.out 2>&1; echo "bench rc=$? $((SECONDS-t0)) s"; grep -E "^\|" $OUT/bench.out | tail -n 26; tar czf $OUT/b.tgz -C $OUT b && rm -rf $OUT/b; BIN=.carry_q PARTS="e2e safety" timeout $((580-(SECONDS-t0))) bash scripts/gpu_check.sh > $OUT/gpu_check.out 2>&1; echo "gpu_check rc=$? $((SECONDS-t0)) s"; tail -n 25 $OUT/gpu_check.out
