#!/usr/bin/env python3
"""The fused-MoE library baseline: a bf16 MoE built on torch._grouped_mm (sort slots by expert, one grouped
GEMM for gate+up, SiLU(gate) * up, one grouped GEMM down, top-k weighted sum per token), timed exactly as
tunetab times its pipelines and as bench/torch_baseline.py times cuBLAS (its time_launches: warm-up, then
CUDA-graph replays of ~1 ms of launches between events, inputs rotated over sets exceeding 2x L2).

Routing is drawn per M from a distribution, never a fixed pattern: balanced (uniform top-k) or skewed
(Zipf s=1.2 expert popularity over a random ranking, top-k without replacement by the Gumbel trick); router
weights are a softmax over the picked logits. The whole sort/align runs inside the timed graph.

Output: one JSON line per (M, routing) on stdout (or appended to --out), with the roofline times of the
weight reads (bf16 and FP8 weights) at the copy bandwidth measured in the same process:
  {"kind": "moe_baseline", "baseline": "torch._grouped_mm bf16", "m": 64, "model_dim": 6144, "inter_dim": 2048,
   "experts": 32, "topk": 8, "routing": "balanced", "us": ..., "min_us": ..., "max_us": ..., "batch": ..,
   "experts_hit": 32, "weight_bytes_bf16": ..., "weight_bytes_fp8": ..., "roofline_us_bf16": ...,
   "roofline_us_fp8": ..., "copy_bytes_per_s": ..., "rel_err": ..., "device": ..., "torch": ...}

usage: moe_baseline.py [--m 1,16,64,...] [--model-dim 6144] [--inter-dim 2048] [--experts 32] [--topk 8]
                       [--routing balanced,skewed] [--out FILE]
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_baseline import copy_bandwidth, rotating_sets, time_launches  # noqa: E402  (same timing method)


def make_routing(m, experts, topk, routing, gen):
    """topk distinct experts per token and normalized weights, as tunetab's make_routing draws them."""
    if routing == "balanced":
        scores = torch.rand(m, experts, device="cuda", generator=gen)
    else:
        rank = torch.randperm(experts, device="cuda", generator=gen)
        popularity = 1.0 / torch.arange(1, experts + 1, device="cuda", dtype=torch.float32).pow(1.2)
        logp = torch.empty(experts, device="cuda").scatter_(0, rank, popularity.log())
        gumbel = -torch.log(-torch.log(torch.rand(m, experts, device="cuda", generator=gen).clamp_min(1e-20)))
        scores = logp.unsqueeze(0) + gumbel
    ids = scores.topk(topk, dim=1).indices.to(torch.int32)
    logits = torch.rand(m, topk, device="cuda", generator=gen) * 2 - 1
    return ids, torch.softmax(logits, dim=1)


def moe_grouped_mm(x, w1t, w2t, ids, weights, experts, inter_dim):
    """x [M, D] bf16; w1t [E, D, 2I] and w2t [E, I, D] (transposed views of w1 [E, 2I, D], w2 [E, D, I]);
    ids [M, topk] int32; weights [M, topk] fp32. Graph-capturable: no host synchronization."""
    m, topk = ids.shape
    flat = ids.reshape(-1).to(torch.int64)
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(experts, device=x.device, dtype=torch.int32).scatter_add_(
        0, flat, torch.ones_like(flat, dtype=torch.int32))
    offs = torch.cumsum(counts, 0, dtype=torch.int32)
    xs = x.index_select(0, order // topk)
    h = torch._grouped_mm(xs, w1t, offs=offs)  # [M*topk, 2I]
    act = F.silu(h[:, :inter_dim]) * h[:, inter_dim:]
    y = torch._grouped_mm(act, w2t, offs=offs)  # [M*topk, D]
    y = y.float() * weights.reshape(-1).index_select(0, order).unsqueeze(1)
    unsorted = torch.empty_like(y).index_copy_(0, order, y)
    return unsorted.view(m, topk, -1).sum(1).to(torch.bfloat16)


def moe_loop_reference(x, w1, w2, ids, weights, inter_dim):
    """fp32 per-slot loops, for the correctness check of the baseline itself."""
    out = torch.zeros(x.shape[0], w2.shape[1], device=x.device, dtype=torch.float32)
    xf = x.float()
    for e in ids.unique().tolist():
        tok, k = (ids == e).nonzero(as_tuple=True)
        h = xf[tok] @ w1[e].float().t()
        a = (F.silu(h[:, :inter_dim]) * h[:, inter_dim:]).to(torch.bfloat16).float()
        out.index_add_(0, tok, (a @ w2[e].float().t()) * weights[tok, k].unsqueeze(1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="1,2,4,8,16,32,64,128,256,304,336,512,1024,2048,4096")
    ap.add_argument("--model-dim", type=int, default=6144)
    ap.add_argument("--inter-dim", type=int, default=2048)
    ap.add_argument("--experts", type=int, default=32)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--routing", default="balanced,skewed")
    ap.add_argument("--out", help="append the JSON lines to this file (default: stdout)")
    args = ap.parse_args()
    d, n, e, k = args.model_dim, args.inter_dim, args.experts, args.topk
    props = torch.cuda.get_device_properties(0)
    bw = copy_bandwidth()
    print(f"# {props.name} torch {torch.__version__}: copy {bw / 1e12:.2f} TB/s", file=sys.stderr, flush=True)
    gen = torch.Generator(device="cuda").manual_seed(1)
    # NOTE: weights scaled as tunetab's (2/sqrt(fan-in)), so SiLU sees O(1) inputs.
    w1 = ((torch.rand(e, 2 * n, d, device="cuda", generator=gen) * 2 - 1) * (2 / d ** 0.5)).to(torch.bfloat16)
    w2 = ((torch.rand(e, d, n, device="cuda", generator=gen) * 2 - 1) * (2 / n ** 0.5)).to(torch.bfloat16)
    weight_bytes = w1.numel() * 2 + w2.numel() * 2
    sets = rotating_sets(weight_bytes, props.L2_cache_size)
    # The weights alone exceed 2x L2 at real shapes, so a second copy is enough to keep them cold.
    w1s = [w1] + [w1.clone() for _ in range(sets - 1)]
    w2s = [w2] + [w2.clone() for _ in range(sets - 1)]
    w1ts = [w.transpose(1, 2) for w in w1s]
    w2ts = [w.transpose(1, 2) for w in w2s]
    sink = open(args.out, "a") if args.out else sys.stdout
    for routing in args.routing.split(","):
        for m in [int(v) for v in args.m.split(",") if v]:
            x = (torch.rand(m, d, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)
            ids, wts = make_routing(m, e, k, routing, gen)
            out = moe_grouped_mm(x, w1ts[0], w2ts[0], ids, wts, e, n)
            rel = None
            if m <= 64:
                ref = moe_loop_reference(x, w1, w2, ids, wts, n)
                rel = ((out.float() - ref).norm() / ref.norm()).item()
            t = time_launches(lambda i: moe_grouped_mm(x, w1ts[i % sets], w2ts[i % sets], ids, wts, e, n))
            hit = int(ids.unique().numel())
            wb16 = hit * 3 * n * d * 2
            wb8 = hit * 3 * n * d + hit * ((2 * n // 128) * (d // 128) + (d // 128) * (n // 128)) * 4
            row = {"kind": "moe_baseline", "baseline": "torch._grouped_mm bf16", "m": m, "model_dim": d, "inter_dim": n,
                   "experts": e, "topk": k, "routing": routing, "us": t["median_us"], "min_us": t["min_us"],
                   "max_us": t["max_us"], "batch": t["batch"], "experts_hit": hit, "weight_bytes_bf16": wb16,
                   "weight_bytes_fp8": wb8, "roofline_us_bf16": wb16 / bw * 1e6, "roofline_us_fp8": wb8 / bw * 1e6,
                   "copy_bytes_per_s": bw, "rel_err": rel, "device": props.name, "torch": torch.__version__}
            print(json.dumps(row), file=sink, flush=True)
            print(f"{routing:8s} M={m:5d} {t['median_us']:9.2f} us  bf16 weights {100 * row['roofline_us_bf16'] / t['median_us']:5.1f}% "
                  f"of roofline  (fp8 roofline {row['roofline_us_fp8']:.1f} us)" + (f"  rel_err {rel:.2e}" if rel is not None else ""),
                  file=sys.stderr, flush=True)
    if args.out:
        sink.close()


if __name__ == "__main__":
    sys.exit(main())
