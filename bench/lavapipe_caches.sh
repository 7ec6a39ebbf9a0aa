#!/usr/bin/env bash
# How close lavapipe's chase comes to the CPU's L1 and L2: the lavapipe
# chase test (Chases/LavapipeLatency) run REPEATS times under
# bookworm-backports' Mesa 25 (scripts/check_lavapipe_backports.sh), each
# attempt's readings collected, both through lavapipe and by the host's own
# chase over the same footprints read by the same analysis, and set against
# Linux's sizes: per chase and level, the median and range of the readings
# and how many lie within 25% (L1) or 35% (L2) of Linux's, the tolerances
# LatencyProbeOnPocl holds the OpenCL path's to. The test's own verdicts do
# not matter here (the numbers are the result); each attempt takes about 10 s.
#
# Usage: bench/lavapipe_caches.sh [REPEATS]   (default 5; build the tests first)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/lavapipe_caches.sh [REPEATS >= 1]" >&2; exit 2; }
scripts/check_lavapipe_backports.sh build/release/tests/gpuscope_device_tests --gtest_repeat="$repeats" \
  >/dev/null 2>&1 || true
log=build/mesa-backports/latency_test.log
[[ -s $log ]] || { echo "lavapipe_caches: no test output in $log" >&2; exit 1; }
python3 - "$log" <<'PY'
import re, statistics, sys
line = re.compile(r"^(\w+) chase, attempt \d+: L(\d) (\S+) B \(Linux: (\S+), the host's own chase: (\S+)\)")
rows = {}
for text in open(sys.argv[1]):
    m = line.match(text)
    if m:
        chase, level, got, linux, host = m[1], int(m[2]), float(m[3]), float(m[4]), float(m[5])
        rows.setdefault((chase, level), {"linux": linux, "got": [], "host": []})
        rows[(chase, level)]["got"].append(got)
        rows[(chase, level)]["host"].append(host)
if not rows:
    sys.exit("lavapipe_caches: no readings in the test's output (did it skip?)")
tolerance = {1: 0.25, 2: 0.35}
def kib(v):
    return f"{v / 1024:.0f}"
def summary(values, want, tol):
    # The test prints -1 for a level not found.
    found = [v for v in values if v >= 0]
    within = sum(abs(v - want) <= tol * want for v in found)
    read = f"{kib(statistics.median(found))} [{kib(min(found))}, {kib(max(found))}]" if found else "none"
    if len(found) < len(values):
        read += f", {len(values) - len(found)} not found"
    return read, f"{within}/{len(values)}"
print("| chase | level | Linux (KiB) | lavapipe: median [range] (KiB) | within | host's chase: median [range] (KiB) | within |")
print("|---|---|---|---|---|---|---|")
for (chase, level), r in sorted(rows.items()):
    tol = tolerance[level]
    got, got_in = summary(r["got"], r["linux"], tol)
    host, host_in = summary(r["host"], r["linux"], tol)
    print(f"| {chase} | L{level} | {kib(r['linux'])} | {got} | {got_in} | {host} | {host_in} |")
print(f"\nwithin: readings within {tolerance[1]:.0%} (L1) or {tolerance[2]:.0%} (L2) of Linux's size")
PY
