#!/usr/bin/env python3
"""Prints an Nsight Compute CSV (ncu --csv --metrics ...) as one line per kernel launch: the kernel's short name and
each metric's value. Usage: ncu_table.py FILE.csv [...]. The device scripts in docs/bench/ pipe their ncu runs here."""
import csv
import re
import sys


def short(name: str) -> str:
    # "void tt::moe_stage_wgmma2<1, 192, 96, 64, 4, int>(tt::MoeStageTma2Args)" -> "moe_stage_wgmma2<1, 192, 96, 64, 4, int>"
    m = re.search(r"(\w+(<[^()]*>)?)\s*\(", name)
    return m.group(1) if m else name[:60]


def main() -> int:
    for path in sys.argv[1:]:
        with open(path, errors="replace") as f:
            rows = list(csv.reader(line for line in f if line.startswith('"')))
        if not rows:
            print(f"{path}: no ncu rows")
            continue
        h = rows[0]
        ii, ki, mi, vi = h.index("ID"), h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
        launches: dict[str, tuple[str, dict[str, str]]] = {}
        metrics: list[str] = []
        for r in rows[1:]:
            launches.setdefault(r[ii], (short(r[ki]), {}))[1][r[mi]] = r[vi]
            if r[mi] not in metrics:
                metrics.append(r[mi])
        print(f"{path}:")
        print(f"  {'kernel':46s} " + " ".join(f"{m[:28]:>28s}" for m in metrics))
        for name, vals in launches.values():
            print(f"  {name[:46]:46s} " + " ".join(f"{vals.get(m, '-'):>28s}" for m in metrics))
    return 0


if __name__ == "__main__":
    sys.exit(main())
