#!/usr/bin/env bash
# How close lavapipe's chase comes to the CPU's L1 and L2: the latency probe
# by address and by index, 4-lane subgroups (LP_NATIVE_VECTOR_WIDTH=128; the
# chase kernels are built for the narrowest size listed), each whole sweep
# run REPEATS times; after each run gpuscope_cache_reading
# (bench/cache_reading.cpp) chases the same footprints natively on pages as
# an allocation without advice gets them (lavapipe's memory is the
# driver's) and reads that curve by the same analysis. The table gives, per
# chase and level, the median and range of the readings and how many lie
# within 25% (L1) or 35% (L2) of Linux's size, and each run's rise across
# Linux's L1.
#
# What moves the readings: a hop is a masked gather across the subgroup,
# and where it costs more than the L1-to-L2 step the L1's end does not show
# (a rise below 1.2x, tests/support/chase_step.hpp): Mesa 22.3 loads each
# lane's address in turn (12 ns a hop on an AVX2-only EPYC, 1.05x across
# its 32 KiB L1); Mesa 25 loads an address the lanes share once (3.2 ns
# there), though on a Zen 5 EPYC its address chase still rises only
# 1.04-1.15x while the index chase steps 1.5x. Past the L1, co-tenants of a
# cloud VM move both lavapipe's reading and the host's own, as for PoCL
# (bench/pocl_caches.sh). Curves recorded on three hosts, and what the
# analysis reads from them, are in tests/data/lavapipe_*/ and
# tests/recorded/lavapipe_chase_loads_test.cpp.
#
# Usage: bench/lavapipe_caches.sh [REPEATS] [--backports]
#   (default 5; each run takes 15-30 s). --backports: under
#   bookworm-backports' Mesa 25 (scripts/unpack_lavapipe_backports.sh)
#   instead of the system's.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=5
for arg in "$@"; do
  case $arg in
    --backports) icd=$(scripts/unpack_lavapipe_backports.sh)
                 lib=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$icd")
                 VK_DRIVER_FILES=$icd LD_LIBRARY_PATH=$(dirname "$lib")
                 export VK_DRIVER_FILES LD_LIBRARY_PATH ;;
    *) [[ $arg =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/lavapipe_caches.sh [REPEATS >= 1] [--backports]" >&2; exit 2; }
       repeats=$arg ;;
  esac
done
cmake --build --preset release --target gpuscope gpuscope_cache_reading >/dev/null
gpuscope=build/release/gpuscope
reader=build/release/gpuscope_cache_reading
export LP_NATIVE_VECTOR_WIDTH=128
device=$($gpuscope list | awk '$1 ~ /^vulkan:/ && $3 == "llvmpipe" { print $1; exit }')
[[ -n $device ]] || { echo "lavapipe_caches: no lavapipe device (install mesa-vulkan-drivers)" >&2; exit 1; }
$gpuscope list | awk -v d="$device" '$1 == d { $1 = $2 = ""; sub(/^ +/, ""); print "lavapipe_caches: " $0 }'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((i = 1; i <= repeats; ++i)); do
  for chase in address index; do
    out=$work/$chase$i
    $gpuscope run --quiet --no-replay --probes latency --chase "$chase" --device "$device" --out "$out" \
      >"$out.log" 2>&1 || { echo "lavapipe_caches: $chase run $i failed:" >&2; cat "$out.log" >&2; exit 1; }
    $reader "$out/results.json" as-allocated | sed "s/^/$chase $i /" >>"$work/readings"
  done
done
bench/cache_table.py "$work/readings"
