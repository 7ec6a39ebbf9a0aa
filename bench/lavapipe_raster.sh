#!/usr/bin/env bash
# What the raster probe reads on lavapipe, run after run, at each thread
# count (LP_NUM_THREADS 1, 2 and 4): llvmpipe shades 64x64 tiles row by row,
# and each run's tile width, height, walk and binning are printed beside
# their confidence, or "none" where the reader left the finding unfound.
#
# What moves the readings: with one thread the trace depends only on
# llvmpipe. With two or more, which tiles are shaded at once, in lockstep or
# in turn, is the host scheduler's choice: two workers stepping alike across
# a tile boundary hide it, and a slice taken from a worker inside a tile
# lifts a block's step (docs/graphics.md, "lavapipe"). The device test
# asserts every finding with one thread and, with more, that what is read
# is right; this script counts how often each is read.
#
# Usage: bench/lavapipe_raster.sh [REPEATS]   (default 6; a run takes about 2 s)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-6}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/lavapipe_raster.sh [REPEATS >= 1]" >&2; exit 2; }
cmake --build --preset release --target gpuscope >/dev/null
gpuscope=build/release/gpuscope
device=$($gpuscope list | awk '$1 ~ /^vulkan:/ && $3 == "llvmpipe" { print $1; exit }')
[[ -n $device ]] || { echo "lavapipe_raster: no lavapipe device (install mesa-vulkan-drivers)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for threads in 1 2 4; do
  for ((i = 1; i <= repeats; ++i)); do
    out=$work/t${threads}_$i
    LP_NUM_THREADS=$threads $gpuscope run --quiet --no-replay --quick --probes raster \
      --device "$device" --out "$out" >"$out.log" 2>&1 ||
      { echo "lavapipe_raster: run $i with $threads threads failed:" >&2; cat "$out.log" >&2; exit 1; }
  done
done
python3 - "$work" "$repeats" <<'PY'
import json, os, sys
work, repeats = sys.argv[1], int(sys.argv[2])
ids = ("graphics.tile.width_px", "graphics.tile.height_px", "graphics.tile.order", "graphics.binning")
print("| threads | run | " + " | ".join(ids) + " |")
print("|---|---|" + "---|" * len(ids))
for threads in (1, 2, 4):
    for i in range(1, repeats + 1):
        r = json.load(open(os.path.join(work, f"t{threads}_{i}", "results.json")))
        found = {f["id"]: f for f in r["findings"]}
        def show(fid):
            f = found.get(fid)
            if not f:
                return "none"
            v = f["value"]
            v = f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
            return f"{v} ({f['confidence']:.2f})"
        print(f"| {threads} | {i} | " + " | ".join(show(fid) for fid in ids) + " |")
PY
