#!/usr/bin/env python3
"""Does a change to the analysis move any finding? Runs `gpuscope analyze
--no-replay` with two binaries on every recorded run (each results.json
under tests/data and docs/examples that holds findings, and any further
folders given) and lists every finding whose value, confidence or presence
differs, and every id whose "unfound" reason differs.

--no-replay: the readers' findings and confidences alone, as the readers
give them (the replay's confidence is the closed loop's, tested on its own).

Usage: scripts/findings_unchanged.py BASE_BINARY NEW_BINARY [DIR...] [--jobs N]
Exit status: 0 when nothing moved, 1 when something did, 2 on bad usage.
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile

# Two values read alike: the readers are deterministic, so a refactor must
# give the same doubles; the tolerance only forgives the last bits a
# reordered sum may change.
SAME_VALUE_REL = 1e-9


def recorded_runs(dirs):
    runs = []
    for top in dirs:
        for root, _, files in os.walk(top):
            for name in files:
                if not name.endswith(".json"):
                    continue
                path = os.path.join(root, name)
                try:
                    with open(path) as f:
                        doc = json.load(f)
                except (OSError, ValueError):
                    continue
                if isinstance(doc, dict) and "findings" in doc and "series" in doc:
                    runs.append(path)
    return sorted(runs)


def analyze(binary, path, out):
    proc = subprocess.run([binary, "analyze", path, "--no-replay", "--out", out],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[:200]}"}
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    return {
        "findings": {f["id"]: (f["value"], f["confidence"]) for f in doc["findings"]},
        "unfound": {u["id"]: u.get("reason", "") for u in doc.get("unfound", [])},
    }


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=SAME_VALUE_REL, abs_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare(base_bin, new_bin, path):
    with tempfile.TemporaryDirectory() as tmp:
        base = analyze(base_bin, path, os.path.join(tmp, "base"))
        new = analyze(new_bin, path, os.path.join(tmp, "new"))
    moved = []
    if "error" in base or "error" in new:
        if base.get("error") != new.get("error"):
            moved.append(("(analyze)", base.get("error", "ok"), new.get("error", "ok")))
        return path, moved
    for fid in sorted(set(base["findings"]) | set(new["findings"])):
        b, n = base["findings"].get(fid), new["findings"].get(fid)
        if b is None or n is None or not same(b[0], n[0]) or not same(b[1], n[1]):
            moved.append((fid, b, n))
    for uid in sorted(set(base["unfound"]) | set(new["unfound"])):
        b, n = base["unfound"].get(uid), new["unfound"].get(uid)
        if b != n:
            moved.append((uid + " (unfound)", b, n))
    return path, moved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    for b in (args.base, args.new):
        if not os.access(b, os.X_OK):
            print(f"findings_unchanged: {b} is not an executable", file=sys.stderr)
            return 2
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [os.path.join(repo, "tests/data"), os.path.join(repo, "docs/examples")] + args.dirs
    runs = recorded_runs(dirs)
    total_moved = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path, moved in pool.map(lambda p: compare(args.base, args.new, p), runs):
            for what, b, n in moved:
                print(f"{os.path.relpath(path, repo)}: {what}: {b} -> {n}")
            total_moved += len(moved)
    print(f"{len(runs)} recorded runs analysed by both binaries; {total_moved} findings moved")
    return 1 if total_moved else 0


if __name__ == "__main__":
    sys.exit(main())
