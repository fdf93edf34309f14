BIN=.carry PARTS="unit e2e safety" bash scripts/gpu_check.sh > $OUT/gpu_check.out 2>&1
