#!/usr/bin/env bash
# What wave width the divergence probe reads on lavapipe, run after run, at
# each LP_NATIVE_VECTOR_WIDTH (128, 256, 512 bits: a subgroup of 4, 8, 16
# lanes, the one size lavapipe lists). Per run: the step each block sweep's
# curve shows (the smallest block whose rate is 1.6x that of blocks of 1),
# for the build that requires lavapipe's size and the plain one, beside the
# findings read from them (exec.wave_width.subgroup_<N>, exec.wave_width).
#
# What moves the readings: on a CPU the sweeps are timed between the host's
# other work, and the host's other work halves a launch's rate for seconds
# at a time on 2 cores, so a run disturbed throughout can show a step at
# the wrong block, or none. A required size steps at lavapipe's width; the
# plain build stepped at 16 at all three widths under Mesa 22.3 (README,
# "Vulkan").
#
# Usage: bench/lavapipe_wave_width.sh [REPEATS]   (default 5; a run takes about 5 s)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/lavapipe_wave_width.sh [REPEATS >= 1]" >&2; exit 2; }
cmake --build --preset release --target gpuscope >/dev/null
gpuscope=build/release/gpuscope
device=$($gpuscope list | awk '$1 ~ /^vulkan:/ && $3 == "llvmpipe" { print $1; exit }')
[[ -n $device ]] || { echo "lavapipe_wave_width: no lavapipe device (install mesa-vulkan-drivers)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for bits in 128 256 512; do
  for ((i = 1; i <= repeats; ++i)); do
    out=$work/w${bits}_$i
    LP_NATIVE_VECTOR_WIDTH=$bits $gpuscope run --quiet --no-replay --quick --probes divergence \
      --device "$device" --out "$out" >"$out.log" 2>&1 ||
      { echo "lavapipe_wave_width: run $i at $bits bits failed:" >&2; cat "$out.log" >&2; exit 1; }
  done
done
python3 - "$work" "$repeats" <<'PY'
import json, os, sys
work, repeats = sys.argv[1], int(sys.argv[2])
def step(series):
    # The smallest block whose rate is 1.6x that of blocks of 1; 0 for none.
    pts = series["points"] if series else []
    if not pts or pts[0]["x"] != 1:
        return 0
    return next((int(p["x"]) for p in pts if p["y"] >= 1.6 * pts[0]["y"]), 0)
print("| bits | lanes | run | required sweep's step | subgroup finding | plain sweep's step | exec.wave_width |")
print("|---|---|---|---|---|---|---|")
for bits in (128, 256, 512):
    lanes = bits // 32
    for i in range(1, repeats + 1):
        r = json.load(open(os.path.join(work, f"w{bits}_{i}", "results.json")))
        series = {s["id"]: s for s in r["series"]}
        found = {f["id"]: f for f in r["findings"]}
        def show(fid):
            f = found.get(fid)
            return f"{f['value']:g} (conf {f['confidence']:.2f})" if f else "none"
        print(f"| {bits} | {lanes} | {i} | {step(series.get(f'divergence.blocks.subgroup_{lanes}'))} "
              f"| {show(f'exec.wave_width.subgroup_{lanes}')} | {step(series.get('divergence.blocks'))} "
              f"| {show('exec.wave_width')} |")
PY
