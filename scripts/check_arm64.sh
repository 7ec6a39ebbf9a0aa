#!/usr/bin/env bash
# Cross-builds gpuscope for 64-bit Arm Linux and runs the arm64 binary under
# qemu-user beside the x86-64 one on the same inputs: `list`, a whole default
# run on a sim preset (lbm apart, sustain left to the x86-64 tests), and
# `analyze` and `report` on a recorded run. Fails when the two binaries
# disagree. Also starts the x86-64 binary where no OpenCL or Vulkan
# library can be found, as on a machine without OpenCL.
#
# Usage: scripts/check_arm64.sh [X86_BINARY]   (default build/release/gpuscope)
# Needs root or sudo the first time (Debian's cross toolchain and qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."
x86=${1:-build/release/gpuscope}
out=${ARM64_CHECK_OUT:-build/arm64-check}

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
if ! dpkg-query -W -f='${Status}' crossbuild-essential-arm64 qemu-user libfmt-dev:arm64 zlib1g-dev:arm64 2>/dev/null |
    grep -c "install ok installed" | grep -qx 4; then
  "${sudo[@]}" dpkg --add-architecture arm64
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    crossbuild-essential-arm64 qemu-user libfmt-dev:arm64 zlib1g-dev:arm64
fi

start=$(date +%s)
cmake --preset arm64 >/dev/null
cmake --build --preset arm64 --target gpuscope
# ELF e_machine (2 bytes at offset 18) is 0xb7 for AArch64.
[[ $(od -An -tx1 -j18 -N2 build/arm64/gpuscope | tr -d ' ') == b700 ]] ||
  { echo "check_arm64: build/arm64/gpuscope is not an arm64 binary" >&2; exit 1; }
built=$(date +%s)

arm=(qemu-aarch64 -L /usr/aarch64-linux-gnu build/arm64/gpuscope)
rm -rf "$out" && mkdir -p "$out"
recorded=docs/examples/h200/results.json

# No arm64 OpenCL library is installed, so the emulated binary also shows the
# OpenCL backend absent with its reason, and lists the sims all the same.
"${arm[@]}" list --verbose | tee "$out/arm64-list.txt"
grep -q "^opencl  no OpenCL library found" "$out/arm64-list.txt"
grep -q "^sim:mali-g52" "$out/arm64-list.txt"

# transfer runs apart too: on the sim its copies and maps advance the budget
# clock by the host's own time, so under qemu it repeats less, and the sim's
# seeded noise then reaches every later probe at another draw (measured
# clock 798.3 MHz on x86-64 against 796.0 under qemu after it).
# Every probe but the application ones. lbm's work on a sim follows the
# host's wall clock (it grows its boxes while its budget lasts): it runs
# apart, quick, and is compared by id. sustain is left to the x86-64 tests
# (SustainProbeOnPocl, GovernorSim): under qemu its quick run took over five
# minutes, its time going to the sim's host-side float work.
measured=$("$x86" run --help | grep -o 'default: all: [a-z,]*' | sed 's/default: all: //' |
  tr ',' '\n' | grep -vx 'lbm\|sustain\|transfer' | paste -sd,)
for bin in x86 arm64; do
  if [[ $bin == x86 ]]; then run=("$x86"); else run=("${arm[@]}"); fi
  # A budget large enough that no probe's refinement is cut short under
  # emulation: both binaries then take the same points.
  # --no-replay: the findings compared are the readers'; the replay (host
  # work, docs/closed-loop.md) would double the emulated time and fold the
  # transfer probe's host-timed copies into confidences.
  "${run[@]}" run --device sim:mali-g52 -q --no-replay --budget-scale 20 --probes "$measured" --out "$out/$bin-sim" \
    >"$out/$bin-sim.txt"
  "${run[@]}" run --device sim:mali-g52 -q --no-replay --quick --probes lbm,transfer --out "$out/$bin-app" \
    >"$out/$bin-app.txt"
  "${run[@]}" analyze "$recorded" --out "$out/$bin-analyze" >"$out/$bin-analyze.txt"
  "${run[@]}" report "$recorded" --format md --out "$out/$bin-report.md" >/dev/null
done
emulated=$(date +%s)

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def findings(path):
    return {f["id"]: f["value"] for f in json.load(open(path))["findings"]}
def close(a, b, rel):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)) or a is None or b is None:
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
bad = []
# analyze: pure arithmetic on the same series; only rounding may differ.
x, a = findings(f"{out}/x86-analyze/results.json"), findings(f"{out}/arm64-analyze/results.json")
bad += [f"analyze {k}: x86 {x.get(k)} arm64 {a.get(k)}" for k in sorted(set(x) | set(a))
        if k not in x or k not in a or not close(x[k], a[k], 1e-9)]
# report: the same Markdown, byte for byte.
if open(f"{out}/x86-report.md").read() != open(f"{out}/arm64-report.md").read():
    bad.append("report: the Markdown reports differ")
# sim run: the same findings. The sim's noise is seeded, the budget leaves no
# refinement cut short and both builds round alike (-ffp-contract=off), so
# the values are equal. host.* and launch.* time the host's own memory and
# threads, which qemu emulates at its own speed: their ids must match, their
# values need not. The lbm run: the same ids (its boxes follow the wall
# clock, so its values need not match).
x, a = findings(f"{out}/x86-sim/results.json"), findings(f"{out}/arm64-sim/results.json")
for k in sorted(set(x) | set(a)):
    if k not in x or k not in a:
        bad.append(f"sim {k}: only in {'x86' if k in x else 'arm64'}")
    elif not k.startswith(("host.", "launch.")) and not close(x[k], a[k], 1e-12):
        bad.append(f"sim {k}: x86 {x[k]} arm64 {a[k]}")
xa, aa = findings(f"{out}/x86-app/results.json"), findings(f"{out}/arm64-app/results.json")
lbm = lambda f: {k for k in f if k.startswith("app.lbm.")}
if not lbm(xa):
    bad.append("app: no app.lbm findings")
bad += [f"app {k}: only in {'x86' if k in xa else 'arm64'}" for k in sorted(lbm(xa) ^ lbm(aa))]
host = lambda f: {k for k in f if k.startswith("host.")}
if not host(xa):
    bad.append("app: no host findings from transfer")
bad += [f"app {k}: only in {'x86' if k in xa else 'arm64'}" for k in sorted(host(xa) ^ host(aa))]
identical = sum(1 for k in x if k in a and x[k] == a[k])
print(f"arm64 check: {len(x)} sim findings ({identical} identical), "
      f"{len(findings(out + '/x86-analyze/results.json'))} analysed findings compared")
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY

# The x86-64 binary with no OpenCL library and no Vulkan loader to be found:
# the loader's search sees only an empty library folder, and the system's
# libOpenCL and libvulkan are hidden behind /dev/null in a private mount
# namespace (root; skipped without it).
if unshare -m true 2>/dev/null; then
  libs=$(ldconfig -p | awk '/libOpenCL\.so|libvulkan\.so/{print $NF}' | sort -u | tr '\n' ' ')
  unshare -m sh -c "for f in $libs; do mount --bind /dev/null \$f; done
    $x86 list --verbose && $x86 analyze $recorded >/dev/null" | tee "$out/x86-no-opencl.txt"
  grep -q "^opencl  no OpenCL library found" "$out/x86-no-opencl.txt"
  if grep -q "^vulkan " "$out/x86-no-opencl.txt"; then  # built with the Vulkan backend
    grep -q "^vulkan  absent: no Vulkan loader" "$out/x86-no-opencl.txt"
  fi
  grep -q "^sim:mali-g52" "$out/x86-no-opencl.txt"
else
  echo "check_arm64: cannot make a mount namespace here; the no-OpenCL start was checked on arm64 only"
fi
echo "arm64 check passed: build $((built - start)) s, emulated runs $((emulated - built)) s"
