#!/usr/bin/env python3
"""Issue 6's benchmark tables: tunetab's exported FP8 rows (dense block-scaled GEMM and fused MoE), re-timed in the
same device call as the library baselines, against them and the roofline.

  report6.py specs --tables DIR --m 1,16,...     prints three lines for the shell: the TUNETAB_TIME_FP8 and
                                                 TUNETAB_TIME_MOE specs (each M with the config of the row the
                                                 consumer's lookup picks for it: aiter_gemm_row, aiter_fmoe_row), and the
                                                 baseline's --shapes
  report6.py report --tables DIR --fp8-time LOG --moe-time LOG --fp8-baseline JSON --moe-baseline JSONL
                                                 prints the markdown tables and the floors' verdicts
"""
import argparse
import csv
import glob
import json
import os
import re
import sys


def fp8_rows(tables):
    """{(N, K): {M: config}} from the exported a8w8 blockscale table."""
    out = {}
    for path in glob.glob(os.path.join(tables, "**", "a8w8_blockscale_tuned_gemm*.csv"), recursive=True):
        for r in csv.DictReader(open(path)):
            name = r["kernelName"]
            cfg = name.split("gemm_fp8_blockscale_", 1)[1] if "gemm_fp8_blockscale_" in name else name
            out.setdefault((int(r["N"]), int(r["K"])), {})[int(r["M"])] = cfg
    return out


def moe_rows(tables):
    """{M: config} from the exported AITER fused-MoE table (both stages name the same tunetab config)."""
    out = {}
    for path in glob.glob(os.path.join(tables, "**", "*tuned_fmoe*.csv"), recursive=True):
        for r in csv.DictReader(open(path)):
            name = r["kernelName1"]
            m = re.search(r"(bf16|fp8fnuz|fp8)_m\d+w\d+_n\d+x\d+_k\d+_s\d+_[a-z0-9]+_sk\d+", name)
            out[int(r["token"])] = m.group(0) if m else name
    return out


def next_pow2(m):
    return 1 << max(m - 1, 0).bit_length()


def aiter_gemm_row(rows, m, n):
    """AITER's GEMM lookup (tuner/profile/lookup.cpp): M itself, then the fine padding (the next power of two below
    16, then multiples of 16/32/64/128 up to 256/1024/4096/beyond), then the coarse one (the next power of two,
    8192 for M > 8192 when N > 4096); None where no row is found (the consumer's default)."""
    step = 16 if m <= 256 else 32 if m <= 1024 else 64 if m <= 4096 else 128
    fine = next_pow2(m) if m < 16 else (m + step - 1) // step * step
    coarse = 8192 if m > 8192 and n > 4096 else next_pow2(m)
    return next((r for r in (m, fine, coarse) if r in rows), None)


def aiter_fmoe_row(rows, m):
    """AITER's fused-MoE lookup below its 32768 tier: the row at the next power of two."""
    return next_pow2(m) if next_pow2(m) in rows else None


def specs(args):
    ms = [int(x) for x in args.m.split(",")]
    fp8, moe = fp8_rows(args.tables), moe_rows(args.tables)
    fp8_spec = ";".join(f"{m},{n},{k}:{rows[aiter_gemm_row(rows, m, n)]}" for (n, k), rows in sorted(fp8.items())
                        for m in ms if aiter_gemm_row(rows, m, n) is not None)
    moe_spec = ";".join(f"{m},{routing}:{moe[aiter_fmoe_row(moe, m)]}" for m in ms for routing in ("balanced", "skewed")
                        if aiter_fmoe_row(moe, m) is not None)
    shapes = ";".join(f"{m},{n},{k}" for (n, k) in sorted(fp8) for m in ms)
    print(f"FP8_SPEC='{fp8_spec}'")
    print(f"MOE_SPEC='{moe_spec}'")
    print(f"FP8_SHAPES='{shapes}'")


def time_lines(path):
    """{key: (config, median_us)} from the TIME lines of a timing tool's log; failures listed apart."""
    times, failed = {}, []
    for line in open(path):
        m = re.match(r"TIME (\S+) (\S+) median_us=([\d.]+)", line)
        if m:
            times[m.group(1)] = (m.group(2), float(m.group(3)))
        elif "Failure" in line or "rel_l2" in line:
            failed.append(line.strip())
    return times, failed


def report(args):
    """Each family's section where its timings and baseline were given (each pair from one device call)."""
    failures = []
    if args.fp8_time and args.fp8_baseline:
        failures += report_fp8(args)
    if args.moe_time and args.moe_baseline:
        failures += report_moe(args)
    if failures:
        print("\nValidation failures in the timing runs:\n" + "\n".join(f"- {x}" for x in failures))


def report_fp8(args):
    fp8_t, fp8_fail = time_lines(args.fp8_time)
    base = json.load(open(args.fp8_baseline))
    print(f"Ceilings measured in this call: copy {base['copy_bytes_per_s'] / 1e12:.2f} TB/s, FP8 matmul "
          f"{base['fp8_matmul_flops_per_s'] / 1e12:.0f} TFLOP/s ({base['device']}, torch {base['torch']}).\n")
    print("Dense FP8 block-scaled GEMM (e4m3fn, A 1x128, B 128x128 scales, bf16 out): tunetab's exported row for each M, "
          "re-timed, against cuBLASLt (`torch._scaled_mm`), same method, same call.\n")
    print("| M | N | K | tunetab us | cuBLASLt us | tunetab / cuBLASLt | roofline us | tunetab % roofline | tunetab config |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    worst = {"small": [], "large": []}
    missing = []
    for s in base["shapes"]:
        m, n, k = s["m"], s["n"], s["k"]
        t = next((v for kk, v in fp8_t.items() if kk.startswith(f"m={m},n={n},k={k},")), None)
        lib = None if "error" in s else s.get("median_us")
        ours = f"{t[1]:.2f}" if t else "(none)"
        ratio = f"{t[1] / lib:.2f}x" if t and lib else "—"
        if not t:
            missing.append(f"{m} x {n} x {k}")
        if t and lib:
            band = "small" if m <= 336 else "large" if m >= 1024 else None
            if band:
                worst[band].append((t[1] / lib, m, n, k))
        libs = f"{lib:.2f}" if lib else "none: " + s.get("error", "?")[:60]
        pct = f"{100 * s['roofline_us'] / t[1]:.0f}%" if t else ""
        cfg = t[0] if t else ""
        print(f"| {m} | {n} | {k} | {ours} | {libs} | {ratio} | {s['roofline_us']:.2f} | {pct} | `{cfg}` |")
    for band, floor in (("small", "<= 1.00x (no slower) at M <= 336"), ("large", "<= 1.25x at M >= 1024")):
        if worst[band]:
            r = max(worst[band])
            n_over = sum(1 for x in worst[band] if x[0] > (1.0 if band == "small" else 1.25))
            print(f"\nWorst ratio {floor.split(' at ')[1]}: {r[0]:.2f}x at {r[1]} x {r[2]} x {r[3]} (floor {floor}); "
                  f"{n_over} of {len(worst[band])} shapes over the floor.")
    if missing:
        print("\nShapes without a tunetab time (a missing row or a failed timing run): " + ", ".join(missing))
    return fp8_fail


def report_moe(args):
    moe_t, moe_fail = time_lines(args.moe_time)
    print("\nFused MoE FP8 per-1x128 (model_dim 6144, inter_dim 2048, 32 experts, top-8): tunetab's exported row for "
          "each M, re-timed, against the bf16 `torch._grouped_mm` MoE, same method, same call; roofline = FP8 weight "
          "reads at the copy bandwidth.\n")
    print("| M | routing | tunetab us | bf16 grouped_mm us | tunetab / baseline | FP8 weight roofline us | "
          "tunetab % roofline | tunetab config |")
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    lines = [json.loads(x) for x in open(args.moe_baseline) if x.strip().startswith("{")]
    misses = []
    for b in sorted(lines, key=lambda b: (b["m"], b["routing"])):
        t = next((v for kk, v in moe_t.items() if kk.startswith(f"m={b['m']},") and kk.endswith(f"routing={b['routing']}")), None)
        ours = f"{t[1]:.1f}" if t else "(none)"
        pct = f"{100 * b['roofline_us_fp8'] / t[1]:.0f}%" if t else ""
        if not t:
            misses.append(f"M={b['m']} {b['routing']}: no tunetab time")
        if t and t[1] >= b["us"]:
            misses.append(f"M={b['m']} {b['routing']}: {t[1]:.1f} >= {b['us']:.1f} us")
        if t and 16 <= b["m"] <= 336 and b["roofline_us_fp8"] / t[1] < 0.6:
            misses.append(f"M={b['m']} {b['routing']}: {pct} of the roofline")
        ratio = f"{t[1] / b['us']:.2f}x" if t else ""
        cfg = t[0] if t else ""
        print(f"| {b['m']} | {b['routing']} | {ours} | {b['us']:.1f} | {ratio} | {b['roofline_us_fp8']:.1f} | {pct} | "
              f"`{cfg}` |")
    print("\nMoE floor misses (slower than the baseline; < 60% of the roofline at M 16..336): " +
          ("; ".join(misses) if misses else "none"))
    return moe_fail


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("specs")
    s.add_argument("--tables", required=True)
    s.add_argument("--m", default="1,16,64,128,256,304,336,512,1024,2048,4096")
    r = sub.add_parser("report")
    r.add_argument("--tables", required=True)
    for a in ("--fp8-time", "--moe-time", "--fp8-baseline", "--moe-baseline"):
        r.add_argument(a)
    args = ap.parse_args()
    if args.cmd == "report" and not ((args.fp8_time and args.fp8_baseline) or (args.moe_time and args.moe_baseline)):
        ap.error("report: give --fp8-time with --fp8-baseline, or --moe-time with --moe-baseline, or both")
    specs(args) if args.cmd == "specs" else report(args)


if __name__ == "__main__":
    main()
