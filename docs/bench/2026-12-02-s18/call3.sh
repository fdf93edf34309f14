#!/usr/bin/env bash
# Session 18, call 3 (the machine of call 2, warm), one command line: the second half of scripts/gpu_check.sh on the
# final binaries (.carry: c1bafbc).
t0=$SECONDS; PARTS="gpu e2e safety" GPU_TESTS='GemmGpu.*:ValidateGpu.*' BIN=.carry bash scripts/gpu_check.sh > $OUT/gpu_check2.out 2>&1; echo "rc=$? $((SECONDS - t0)) s"; tail -n 8 $OUT/gpu_check2.out
