#!/usr/bin/env python3
"""The closed loop's reproduction table (docs/closed-loop.md) of one or more
runs: every replayed series with its points, median and worst error and
verdict, one column group per run, grouped by probe.

    bench/replay_table.py RESULTS.json [RESULTS.json ...] [--names A,B]

A file may be a whole results.json or one holding only its "model" section
(tests/data/h100/closed_loop_vulkan_replay.json).
"""
import argparse
import json
import sys


def replay_of(path):
    with open(path) as f:
        r = json.load(f)
    model = r.get("model", {})
    if "replay" not in model:
        sys.exit(f"replay_table: {path} holds no replay (a run with --no-replay, or from before the loop)")
    return {s["id"]: s for s in model["replay"]["series"]}, model["replay"]


def cell(s):
    if s is None:
        return "-", "-"
    verdict = "yes" if s["reproduced"] else "**no**"
    return f"{100 * s['median_error']:.1f}% ({100 * s['worst_error']:.0f}%)", verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--names", default="", help="column names, comma-separated (default: the file names)")
    args = ap.parse_args()
    names = args.names.split(",") if args.names else args.results
    runs = [replay_of(p) for p in args.results]
    ids = []
    for series, _ in runs:
        ids += [i for i in series if i not in ids]
    head = "| series | " + " | ".join(f"{n}: median (worst) | reproduced" for n in names) + " |"
    print(head)
    print("|---|" + "---|---|" * len(runs))
    for i in ids:
        cells = []
        for series, _ in runs:
            cells += cell(series.get(i))
        print(f"| {i} | " + " | ".join(cells) + " |")
    print()
    for n, (series, rp) in zip(names, runs):
        ok = sum(1 for s in series.values() if s["reproduced"])
        print(f"- {n}: {ok} of {len(series)} series reproduced; replay {rp['wall_s']:.1f} s of host time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
