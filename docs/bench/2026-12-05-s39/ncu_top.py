#!/usr/bin/env python3
"""Session 39: the SASS instructions of an ncu source page (--page source --csv --print-source sass) that hold the
most warp-stall samples, with each one's share and its largest stall reasons.   usage: ncu_top.py FILE.sass.csv"""
import csv
import sys


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


rows = list(csv.reader(open(sys.argv[1], newline="")))
start = next((i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r)), None)
if start is None:
    print(sys.argv[1], ": no header row with a Source column; first rows:", rows[:3])
    sys.exit(0)
head = [c.strip() for c in rows[start]]
body = [r for r in rows[start + 1:] if len(r) == len(head)]
src = head.index("Source")
allc = next((i for i, c in enumerate(head) if c.startswith("Warp Stall Sampling (All")), None)
reasons = [i for i, c in enumerate(head) if c.startswith("stall_") or c.startswith("smsp__pcsamp_warps_issue_stalled")]
print(f"== {sys.argv[1]}: {len(body)} instructions; columns: {len(head)}")
if allc is None:
    print("columns:", head)
    sys.exit(0)
total = sum(num(r[allc]) for r in body) or 1.0
by_reason = {head[i]: sum(num(r[i]) for r in body) for i in reasons}
print("stall reasons over the kernel:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in
                                                 sorted(by_reason.items(), key=lambda kv: -kv[1])[:8]))
for r in sorted(body, key=lambda r: -num(r[allc]))[:25]:
    top = sorted(((num(r[i]), head[i]) for i in reasons), reverse=True)[:2]
    print(f"{100 * num(r[allc]) / total:5.1f}%  {r[src].strip()[:70]:70s}  " + ", ".join(f"{n} {v:.0f}" for v, n in top if v))
