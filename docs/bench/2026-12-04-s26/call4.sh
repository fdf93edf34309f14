#!/usr/bin/env bash
# Session 26, call 4: the SASS of tma2 <128, 96, 96, 4> (int index) before and after kSplitK (15bb415's header and
# 7ed675e's, split-K 1), compiled here with nvcc -arch=sm_90a -cubin (ptxas: 159 and 124 registers), disassembled
# there (this machine has no cuobjdump). Run as: for v in old mid new; do cuobjdump -sass sass_tmp/$v.cubin > $OUT/$v.sass; done
# The consumer's K loop of each is kept in call4/ (161 instructions each).
