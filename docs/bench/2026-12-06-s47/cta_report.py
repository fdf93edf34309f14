#!/usr/bin/env python3
"""Per-CTA timelines (call3.sh's CSVs): for each shape and config, the K loop's time (stage 0 full to the loop's end)
by tile row (by), by SM (the slowest SMs, and whether the two runs agree), and the last store against the median."""
import csv
import statistics
import sys
from collections import defaultdict


def load(path):
    rows = defaultdict(list)
    for r in csv.DictReader(open(path)):
        rows[(r["M"], r["N"], r["K"], r["config"])].append({k: (v if k == "config" else int(v)) for k, v in r.items()})
    return rows


runs = [load(p) for p in sys.argv[1:]]
for key, ctas in runs[0].items():
    kl = lambda c: (c["kloop_end"] - c["stage0"]) / 1000
    ks = sorted(kl(c) for c in ctas)
    print(f"== {'x'.join(key[:3])} {key[3]}: {len(ctas)} CTAs; K loop us min {ks[0]:.2f} median {statistics.median(ks):.2f} "
          f"max {ks[-1]:.2f}; stage0 max {max(c['stage0'] for c in ctas) / 1000:.2f}; last store {max(c['stores'] for c in ctas) / 1000:.2f}")
    by = defaultdict(list)
    for c in ctas:
        by[c["by"]].append(kl(c))
    print("   by tile row: " + "  ".join(f"{b}: {statistics.median(v):.2f}/{max(v):.2f}" for b, v in sorted(by.items())))
    slow = sorted(ctas, key=kl, reverse=True)[:8]
    print("   slowest (bx,by,sm,us): " + " ".join(f"({c['bx']},{c['by']},{c['smid']},{kl(c):.2f})" for c in slow))
    sm_groups = defaultdict(list)
    for c in ctas:
        sm_groups[c["smid"] // 18].append(kl(c))
    print("   by smid // 18: " + "  ".join(f"{g}: n{len(v)} {statistics.median(v):.2f}/{max(v):.2f}" for g, v in sorted(sm_groups.items())))
    if len(runs) > 1 and key in runs[1]:
        other = {c["smid"]: kl(c) for c in runs[1][key]}
        mine = {c["smid"]: kl(c) for c in ctas}
        common = [s for s in mine if s in other]
        if len(common) > 3:
            a = [mine[s] for s in common]
            b = [other[s] for s in common]
            ma, mb = statistics.mean(a), statistics.mean(b)
            cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
            den = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
            print(f"   run 2: {len(common)} SMs in common; K-loop time correlation by SM {cov / den if den else 0:.2f}")
