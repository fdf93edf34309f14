#!/usr/bin/env python3
"""Tabulates the MoE timing tool's lines (TUNETAB_TIME_MOE=... tunetab_gpu_tests --gtest_filter='MoeGpu.TimeConfigs*'
prints "TIME <problem key> <config> median_us=..."): one line per M and routing, a column per config and log, the
fastest marked *. Usage: moe_times.py LABEL=LOG [LABEL=LOG ...]."""
import re
import sys

LINE = re.compile(r"TIME m=(\d+),.*routing=(\w+) (\S+) median_us=([\d.]+)")


def short(config: str) -> str:
    return re.sub(r"^fp8_|_k128|_sk1$", "", config)


def main() -> int:
    times: dict[tuple[int, str], dict[str, float]] = {}
    columns: list[str] = []
    for arg in sys.argv[1:]:
        label, _, path = arg.partition("=")
        for line in open(path, errors="replace"):
            m = LINE.search(line)
            if not m:
                continue
            col = f"{label}:{short(m[3])}" if len(sys.argv) > 2 else short(m[3])
            if col not in columns:
                columns.append(col)
            times.setdefault((int(m[1]), m[2]), {})[col] = float(m[4])
    width = max([len(c) for c in columns] + [8])
    print(f"{'M':>5} {'routing':8s} " + " ".join(f"{c:>{width}s}" for c in columns))
    for key in sorted(times):
        row = times[key]
        best = min(row.values())
        cells = [f"{row[c]:>{width - 1}.1f}{'*' if row[c] == best else ' '}" if c in row else f"{'-':>{width}s}" for c in columns]
        print(f"{key[0]:5d} {key[1]:8s} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
