#!/usr/bin/env python3
"""Where a kernel's warps stall, from Nsight Compute's source page (`ncu --import R --page source --csv
--print-source sass > S.csv`, as docs/bench/2026-12-02-s14/call1.sh writes it; .gz accepted): per kernel, the stall
reasons over all samples, the samples of each code region (instructions grouped by their execution count: the
consumer loop, the producer loop, the epilogue...), and the instructions with the most samples.
Usage: python3 scripts/ncu_stalls.py S.csv[.gz] [TOP]"""
import collections
import csv
import gzip
import sys


def kernels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    name, header, out = None, None, collections.defaultdict(list)
    for r in rows:
        if not r:
            continue
        if r[0] == "Kernel Name":
            name, header = r[1], None
        elif r[0] == "Address":
            header = r
        elif header and name:
            out[name].append(dict(zip(header, r)))
    return out


def main():
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    for name, ins in kernels(sys.argv[1]).items():
        samples = lambda i: float(i["Warp Stall Sampling (All Samples)"] or 0)
        total = sum(samples(i) for i in ins) or 1.0
        reasons = [c for c in ins[0] if c.startswith("stall_") and "(Not Issued)" not in c]
        by_reason = {c: sum(float(i[c] or 0) for i in ins) for c in reasons}
        print(f"== {name}: {total:.0f} samples")
        print("  reasons: " + ", ".join(f"{c[6:]} {100 * v / total:.1f}%"
                                        for c, v in sorted(by_reason.items(), key=lambda x: -x[1])[:8]))
        regions, count = collections.Counter(), collections.Counter()
        for i in ins:
            e = int(i["Instructions Executed"] or 0)
            regions[e] += samples(i)
            count[e] += 1
        for e, s in regions.most_common(5):
            print(f"  region executed {e:>9}x: {count[e]:>4} instructions, {100 * s / total:5.1f}% of samples")
        for i in sorted(ins, key=lambda i: -samples(i))[:top]:
            why = sorted(((c[6:], float(i[c] or 0)) for c in reasons), key=lambda x: -x[1])[:2]
            print(f"  {100 * samples(i) / total:5.1f}% x{i['Instructions Executed']:>8} {i['Source'].strip()[:64]:64} "
                  + " ".join(f"{n} {100 * v / total:.1f}" for n, v in why if v))


if __name__ == "__main__":
    main()
