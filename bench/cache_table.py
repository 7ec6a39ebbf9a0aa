#!/usr/bin/env python3
"""Tabulates cache readings written by bench/cache_reading.cpp, one run per
line prefixed with the chase's name and the run's number:

    <chase> <run> L<level> <device bytes> <host's chase bytes> <Linux bytes>
    <chase> <run> rise <x>

Per chase and level: Linux's size, the device's and the host's readings
(median and range) and how many lie within 25% (L1) or 35% (L2) of Linux's;
per chase, the curve's rise across Linux's L1. -1 is a level not found.
Used by bench/pocl_caches.sh and bench/lavapipe_caches.sh.
"""
import statistics
import sys

TOLERANCE = {1: 0.25, 2: 0.35}


def kib(v):
    return f"{v / 1024:.0f}"


def summary(values, want, tol):
    found = [v for v in values if v >= 0]
    within = sum(abs(v - want) <= tol * want for v in found)
    read = f"{kib(statistics.median(found))} [{kib(min(found))}, {kib(max(found))}]" if found else "none"
    if len(found) < len(values):
        read += f", {len(values) - len(found)} not found"
    return read, f"{within}/{len(values)}"


def main(path):
    levels, rises = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[2] == "rise":
            rises.setdefault(f[0], []).append(float(f[3]))
        elif len(f) == 6 and f[2] in ("L1", "L2"):
            row = levels.setdefault((f[0], int(f[2][1])), {"linux": float(f[5]), "got": [], "host": []})
            row["got"].append(float(f[3]))
            row["host"].append(float(f[4]))
    if not levels:
        sys.exit("cache_table: no readings")
    print("| chase | level | Linux (KiB) | device: median [range] (KiB) | within | host's chase: median [range] (KiB) | within |")
    print("|---|---|---|---|---|---|---|")
    for (chase, level), r in sorted(levels.items()):
        got, got_in = summary(r["got"], r["linux"], TOLERANCE[level])
        host, host_in = summary(r["host"], r["linux"], TOLERANCE[level])
        print(f"| {chase} | L{level} | {kib(r['linux'])} | {got} | {got_in} | {host} | {host_in} |")
    print(f"\nwithin: readings within {TOLERANCE[1]:.0%} (L1) or {TOLERANCE[2]:.0%} (L2) of Linux's size")
    for chase, values in sorted(rises.items()):
        print(f"{chase}: the curve's rise from half Linux's L1 to twice it, run by run: "
              + ", ".join(f"{v:.2f}x" for v in values))


if __name__ == "__main__":
    main(sys.argv[1])
