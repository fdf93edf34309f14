#!/usr/bin/env bash
# Session 18, call 4 (a fresh machine), one command line: bench/wgmma_rate.cu built there and run twice (the second
# run's first four lines only), the SM clock read before and after.
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I templates bench/wgmma_rate.cu -o /tmp/wr 2>&1 | grep -v "warning #177\|^ *\^\|^$\|Remark\|constexpr\|const int" | head -5; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv; /tmp/wr; /tmp/wr | tail -n +2 | head -4; nvidia-smi --query-gpu=clocks.sm --format=csv
