#!/usr/bin/env python3
"""Session 43: do cuBLASLt's blockwise FP8 kernels overlap the kernel before them (programmatic dependent launch)?
Call 3's ncu put tma4 128 x 128 and cuBLASLt at the same in-kernel duration at 304 x 4096 x 512 / 2048, where the
benchmark's back-to-back graph replays time cuBLASLt 0.9-1.0 us faster. Records 40 back-to-back launches (eager, then a
CUDA graph replay) with torch.profiler (CUPTI) and prints, per kernel, the gap from the previous kernel's end to its
start (negative: they overlapped), for torch._scaled_mm and, as a reference, a bf16 torch.mm and an elementwise add.
    usage: pdl_probe.py [M,N,K]"""
import json
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "bench")
from fp8_baseline import operands  # noqa: E402

m, n, k = (int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "304,4096,2048").split(","))
g = torch.Generator(device="cuda").manual_seed(1)
fp8 = [operands(m, n, k, g) for _ in range(8)]
bf = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
      for _ in range(8)]
big = [torch.randn(16 << 20, device="cuda") for _ in range(8)]
cases = {
    "scaled_mm": lambda i: torch._scaled_mm(fp8[i % 8][0], fp8[i % 8][1].t(), fp8[i % 8][2], fp8[i % 8][3],
                                            out_dtype=torch.bfloat16),
    "bf16 mm": lambda i: torch.mm(bf[i % 8][0], bf[i % 8][1].t()),
    "add": lambda i: big[i % 8].add(1.0),
}


def gaps(trace_path):
    ev = [e for e in json.load(open(trace_path))["traceEvents"] if e.get("cat") == "kernel"]
    ev.sort(key=lambda e: e["ts"])
    return ev, [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(ev, ev[1:])]


for name, f in cases.items():
    run = lambda: [f(i) for i in range(40)]  # noqa: E731
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    torch.cuda.synchronize()
    for mode in ("eager", "graph"):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            (run() if mode == "eager" else graph.replay())
            torch.cuda.synchronize()
        path = tempfile.mktemp(suffix=".json")
        prof.export_chrome_trace(path)
        ev, gp = gaps(path)
        durs = [e["dur"] for e in ev]
        print(f"{name:10s} {mode:5s} kernels={len(ev)} dur median {statistics.median(durs):.2f} us; gap to the previous end: "
              f"median {statistics.median(gp):.2f} min {min(gp):.2f} max {max(gp):.2f} us; start-to-start median "
              f"{statistics.median([b['ts'] - a['ts'] for a, b in zip(ev, ev[1:])]):.2f} us; {ev[0]['name'][:70]}",
              flush=True)
