# Session 28, call 4 (one command line, the same binaries; call 3's tables copied into runs/glm5 beforehand): the MoE
# benchmark on those tables, then gpu_check.
t0=$SECONDS; BIN=.carry OUT=$OUT/b TABLES=runs/glm5 PARTS=moe bash scripts/bench_fp8_moe.sh > $OUT/bench.out 2>&1; echo "bench rc=$? $((SECONDS-t0)) s"; (cd $OUT && tar czf bench.tgz b && rm -rf b); tail -n 40 $OUT/bench.out; BIN=.carry PARTS="unit e2e safety" bash scripts/gpu_check.sh > $OUT/gpu_check.out 2>&1; echo "gpu_check rc=$? $((SECONDS-t0)) s"; tail -n 25 $OUT/gpu_check.out
