#!/usr/bin/env python3
"""Session 28: which cuBLASLt kernel torch._scaled_mm (1x128 / 128x128 block scales) runs for each shape, for ncu
with --profile-from-start off: operands are made first, then each shape's product runs 3 times inside
cudaProfilerStart/Stop.   usage: ncu_scaled_mm.py "M,N,K;..." """
import sys

import torch

sys.path.insert(0, "bench")
from fp8_baseline import operands  # noqa: E402

g = torch.Generator(device="cuda").manual_seed(1)
shapes = [tuple(int(v) for v in s.split(",")) for s in sys.argv[1].split(";")]
ops = [operands(m, n, k, g) for m, n, k in shapes]
for a, b, sa, sb in ops:  # warm: cuBLASLt's heuristics and module loads outside the profiled range
    torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for (m, n, k), (a, b, sa, sb) in zip(shapes, ops):
    torch.cuda.nvtx.range_push(f"{m}x{n}x{k}")
    for _ in range(3):
        torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
torch.cuda.profiler.stop()
print("done", len(shapes))
