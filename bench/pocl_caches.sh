#!/usr/bin/env bash
# How close the latency probe's reading of the CPU's L1 and L2 through PoCL
# comes to Linux's sizes and to the host's own chase. The latency probe runs
# REPEATS times on PoCL's CPU device (its single-threaded basic driver: the
# pthread driver's runtime threads share the chase's L1 and L2 on VMs whose
# vCPUs are hyperthreads of one core); after each run
# gpuscope_cache_reading (bench/cache_reading.cpp) chases the same
# footprints natively on 2 MiB pages, as PoCL's buffers get them, and reads
# that curve by the same analysis. The table gives, per level, the median
# and range of the readings and how many lie within 25% (L1) or 35% (L2) of
# Linux's size.
#
# What moves the readings: a cloud VM shares its core's L1 and L2 and the
# socket's L3 with other tenants, and the analysis reads what the chase
# shows that minute. Where the first-level TLB's reach (64 entries of 4 KiB)
# ends inside the L2, the curve climbs from there (256 KiB on a Zen 3 VM's
# 512 KiB L2); on an Emerald Rapids VM the 2 MiB L2 climbs from 0.4 MiB on
# 2 MiB pages too, and while other tenants hold more of the L3 that climb
# reads as a level of its own. The host's own chase moves with them, so a
# reading that misses Linux's size and matches the host's is the host's
# state, not the probe's. Curves recorded on such hosts, and what the
# analysis reads from them, are in tests/data/pocl_*/ and
# tests/recorded/latency_curves_test.cpp.
#
# Usage: bench/pocl_caches.sh [REPEATS]   (default 5; each run takes 10-30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/pocl_caches.sh [REPEATS >= 1]" >&2; exit 2; }
cmake --build --preset release --target gpuscope gpuscope_cache_reading >/dev/null
gpuscope=build/release/gpuscope
reader=build/release/gpuscope_cache_reading
export POCL_DEVICES=basic
device=$($gpuscope list | awk '$1 ~ /^opencl:/ && $2 == "cpu" { print $1; exit }')
[[ -n $device ]] || { echo "pocl_caches: no OpenCL CPU device (is pocl-opencl-icd installed?)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((i = 1; i <= repeats; ++i)); do
  $gpuscope run --quiet --no-replay --probes latency --device "$device" --out "$work/run$i" >"$work/run$i.log" 2>&1 ||
    { echo "pocl_caches: run $i failed:" >&2; cat "$work/run$i.log" >&2; exit 1; }
  $reader "$work/run$i/results.json" huge | sed "s/^/pocl $i /" >>"$work/readings"
done
bench/cache_table.py "$work/readings"
