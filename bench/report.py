#!/usr/bin/env python3
"""Joins tunetab's exported AITER table with the same-run library baseline into a markdown table.

usage: report.py --tuned bf16_tuned_gemm.csv --baseline baseline.json
"""
import argparse
import csv
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tuned", required=True)
    ap.add_argument("--baseline", required=True)
    args = ap.parse_args()
    base = json.load(open(args.baseline))
    rows = {(int(r["M"]), int(r["N"]), int(r["K"])): r for r in csv.DictReader(open(args.tuned))}
    bw, rate = base["copy_bytes_per_s"], base["bf16_matmul_flops_per_s"]
    print(f"Ceilings measured in this run: copy {bw / 1e12:.2f} TB/s (read + write), "
          f"bf16 matmul {rate / 1e12:.0f} TFLOP/s ({base['device']}, torch {base['torch']}).\n")
    print("| M | N | K | tunetab us | cuBLAS (F.linear) us | tunetab / cuBLAS | roofline us | tunetab % roofline "
          "| cuBLAS % roofline | tunetab kernel |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    worst = {"small": 0.0, "large": 0.0}
    for s in base["shapes"]:
        key = (s["m"], s["n"], s["k"])
        r = rows.get(key)
        if r is None:
            print(f"| {key[0]} | {key[1]} | {key[2]} | (no row) | {s['linear_us']:.2f} | | | | | |")
            continue
        us = float(r["us"])
        ratio = us / s["linear_us"]
        roof = s["roofline_us"]
        band = "small" if key[0] <= 336 else "large" if key[0] >= 1024 else None
        if band:
            worst[band] = max(worst[band], ratio)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {us:.2f} | {s['linear_us']:.2f} | {ratio:.2f}x | {roof:.2f} | "
              f"{100 * roof / us:.0f}% | {100 * roof / s['linear_us']:.0f}% | `{r['kernelName']}` |")
    print(f"\nWorst tunetab/cuBLAS ratio: M <= 336: {worst['small']:.2f}x (floor 1.25x); "
          f"M >= 1024: {worst['large']:.2f}x (floor 1.5x).")


if __name__ == "__main__":
    main()
