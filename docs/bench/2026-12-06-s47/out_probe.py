#!/usr/bin/env python3
"""Where the torch baseline's outputs land: the data pointers of _scaled_mm's outputs inside one captured CUDA graph
(bench/torch_baseline.py's capture), for fp8_baseline.py's default (torch allocates each call's output)."""
import torch

m, n, k = 304, 4096, 2048
FP8 = torch.float8_e4m3fn
a = torch.randn(m, k, device="cuda").to(FP8)
b = torch.randn(n, k, device="cuda").to(FP8)
sa = (torch.rand(k // 128, m, device="cuda") + 1e-3).t()
sb = (torch.rand(n // 128, k // 128, device="cuda") + 1e-3).t()
ptrs = []
torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)
graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(stream):
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(16):
            ptrs.append(torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16).data_ptr())
print(f"16 captured calls: {len(set(ptrs))} distinct output pointers: {sorted(set(hex(p) for p in ptrs))}")
