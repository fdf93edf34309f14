# Session 21, call 4 (same warm machine): gpu_check's safety part with .carry_q's safety test binary added.
t0=$SECONDS; BIN=.carry_q PARTS="safety" timeout 300 bash scripts/gpu_check.sh > $OUT/gpu_check_safety.out 2>&1; echo "gpu_check safety rc=$? $((SECONDS-t0)) s"; tail -n 12 $OUT/gpu_check_safety.out; grep -E "^\[  (PASSED|FAILED) |^\[==========\]" $OUT/gpu_check/safety.log | head
