#!/usr/bin/env python3
"""Library baseline for the dense FP8 block-scaled GEMM (issue 6): torch._scaled_mm with per-1x128 activation
scales and 128x128 weight scales (cuBLASLt's blockwise kernels), timed exactly as tunetab times its kernels
(bench/torch_baseline.py's method). Also measures, in the same process, the copy bandwidth and the FP8 matmul
rate (tensor-wise scaled 8192^3) that the roofline uses. A shape cuBLASLt cannot serve is recorded with its
error (it has no blockwise kernel for M = 1, for one).

usage: fp8_baseline.py --shapes "M,N,K;..." [--json OUT]   (env TUNETAB_TIME_SETS=N: N input sets, 1 keeps them in L2;
       TUNETAB_BASELINE_OUT=rotate|alloc: one output per input set, as tunetab's timing (the default), or the output
       torch allocates at each call, which inside the graph's capture is one block every call: an output kept in L2)
"""
import json
import os

import torch

from torch_baseline import copy_bandwidth, rotating_sets, shapes_and_json_args, time_launches

FP8 = torch.float8_e4m3fn


def fp8_matmul_rate():
    n = 8192
    a = torch.randn(n, n, device="cuda").to(FP8)
    b = torch.randn(n, n, device="cuda").to(FP8)
    one = torch.ones((), device="cuda")
    t = time_launches(lambda i: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16), warmup_ms=100,
                      repeats=10, batch_ms=10)
    return 2 * n ** 3 / (t["median_us"] * 1e-6)


def operands(m, n, k, g):
    """A [M,K] and B [N,K] e4m3fn, scale_a [M, K/128] column-major, scale_b as cuBLASLt wants it: the
    transpose of a row-major [N/128, K/128] whose rows are padded to 4 blocks."""
    a = (torch.rand(m, k, device="cuda", generator=g) * 2 - 1).mul_(240).to(FP8)
    b = (torch.rand(n, k, device="cuda", generator=g) * 2 - 1).mul_(240).to(FP8)
    sa = (torch.rand(k // 128, m, device="cuda", generator=g) * 1e-2 + 1e-3).t()
    # NOTE: cuBLASLt reads the 128x128 scales with rows padded to a multiple of 4 blocks; unpadded rows gave
    # wrong results at K = 256 (rel_l2 ~1e3 against the dequantized product).
    kb = k // 128
    padded = torch.rand((n + 127) // 128, (kb + 3) // 4 * 4, device="cuda", generator=g) * 1e-2 + 1e-3
    sb = padded[:, :kb].t()
    return a, b, sa, sb


def main():
    shapes, json_path = shapes_and_json_args()
    props = torch.cuda.get_device_properties(0)
    bw = copy_bandwidth()
    rate = fp8_matmul_rate()
    out = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda, "copy_bytes_per_s": bw,
           "fp8_matmul_flops_per_s": rate, "shapes": []}
    print(f"# {props.name} torch {torch.__version__}: copy {bw / 1e12:.2f} TB/s, fp8 matmul {rate / 1e12:.0f} TFLOP/s",
          flush=True)
    print("M,N,K,scaled_mm_us,roofline_us,note", flush=True)
    # NOTE: until 2026-12-06 (session 47) the baseline let torch allocate its output (one reused block, in L2) while
    # tunetab's outputs rotate with the inputs; both rotating moved cuBLASLt's times by 0.6% (geomean, 80 shapes,
    # H100): docs/performance.md, session 47.
    out_mode = os.environ.get("TUNETAB_BASELINE_OUT", "rotate")
    if out_mode not in ("alloc", "rotate"):
        raise SystemExit(f"TUNETAB_BASELINE_OUT: alloc or rotate (got '{out_mode}')")
    out["output"] = out_mode
    g = torch.Generator(device="cuda").manual_seed(1)
    for m, n, k in shapes:
        # bytes: fp8 A and B, fp32 scales, bf16 C
        set_bytes = m * k + n * k + 4 * (m * (k // 128) + ((n + 127) // 128) * (k // 128)) + 2 * m * n
        roof_us = max(set_bytes / bw, 2 * m * n * k / rate) * 1e6
        row = {"m": m, "n": n, "k": k, "roofline_us": roof_us}
        try:
            # TUNETAB_TIME_SETS=N: N input sets instead of the rotation over 2x L2 (as tunetab's timing test).
            sets = int(os.environ["TUNETAB_TIME_SETS"]) if os.environ.get("TUNETAB_TIME_SETS") else \
                rotating_sets(set_bytes, props.L2_cache_size)
            ops = [operands(m, n, k, g) for _ in range(sets)]
            a, b, sa, sb = ops[0]
            # One output per input set, passed as out= (rotate): every tensor rotates, as in tunetab's timing. The
            # check below reads set 0's, so the path timed is the path checked.
            outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)] \
                if out_mode == "rotate" else None
            kw = {"out": outs[0]} if outs else {}
            got = torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16, **kw).float()
            ref = ((a.float().view(m, k // 128, 128) * sa.reshape(m, k // 128, 1)).view(m, k) @
                   (b.float().view(n, k // 128, 128) *
                    sb.t().repeat_interleave(128, 0)[:n].reshape(n, k // 128, 1)).view(n, k).t())
            rel = ((got - ref).norm() / ref.norm()).item()
            # NOTE: without out= (alloc), inside the graph's capture each call's output comes from the graph's pool,
            # freed at once and so the same block every call (docs/bench/2026-12-06-s47/out_probe.py): it stays in L2.
            t = time_launches(lambda i: torch._scaled_mm(ops[i % sets][0], ops[i % sets][1].t(), ops[i % sets][2],
                                                         ops[i % sets][3], out_dtype=torch.bfloat16,
                                                         **({"out": outs[i % sets]} if outs else {})))
            row.update(t)
            row["rel_l2_vs_dequantized"] = rel
            note = f"rel_l2 {rel:.2e}"
            if not rel < 1e-2:  # a wrong product is no baseline
                row["error"] = note = f"wrong result: rel_l2 {rel:.2e} against the dequantized product"
            print(f"{m},{n},{k},{t['median_us']:.2f},{roof_us:.2f},{note}", flush=True)
        except Exception as e:  # noqa: BLE001 (a shape cuBLASLt cannot serve is a result, not a crash)
            row["error"] = str(e).splitlines()[0][:200]
            print(f"{m},{n},{k},,{roof_us:.2f},unsupported: {row['error']}", flush=True)
        out["shapes"].append(row)
        torch.cuda.empty_cache()
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
