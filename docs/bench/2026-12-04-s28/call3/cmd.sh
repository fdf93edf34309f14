# Session 28, call 3 (one command line; binaries of the run-order commit): the profile tune resumed from
# runs/glm5.db.gz (dbbcb7c's), the wgmma2 MoE rows re-judged on the new tile order. Its log: runs/glm5/tune.s28.call3.log.
rm -f build/glm5.db; BIN=.carry BUDGET_S=560 OUT=$OUT bash scripts/tune_profile.sh profiles/glm-5-fp8-ep8-h200.cfg glm5 > $OUT/tune_tail.txt 2>&1; echo rc=$?; grep -E "gaps|^rc=" $OUT/glm5.tune.log | tail -n 4 | cut -c1-200; grep -iE "fused_moe|moe" $OUT/glm5.tune.log | tail -n 30 | cut -c1-220
