#!/usr/bin/env bash
# Runs the lavapipe chase test (Chases/LavapipeLatency: the L1 and L2 read
# through Vulkan, set against Linux's sizes and the host's own chase) under
# bookworm-backports' Mesa, and fails if it fails, if the index chase skips,
# or if the address chase skips for any reason but the one below.
#
# Debian 12's Mesa 22.3 loads each lane's address in turn; on an AVX2-only
# host a hop then costs 12 ns, the curve shows no step at the L1's end, and
# the test skips saying so (README, "Vulkan"). Mesa 25 loads an address the
# lanes share once, so there the test must find both caches, except that on
# a Zen 5 EPYC its address chase still raises the curve only 1.04-1.15x
# across the 48 KiB L1 (6.2-6.7 ns a hop, 7.1 past it), below the device
# test's least visible step, while the index chase steps 1.5x
# (tests/data/lavapipe_zen5/): there the address chase's skip, which says
# so, is reported and the index chase must still read both caches. Only this test
# runs under it: its llvmpipe crashes in textured fragment shaders on such a
# host (a 32-byte aligned AVX store to a 16-byte aligned stack slot in its
# JIT code), which the graphics tests reach.
#
# The driver is unpacked into build/mesa-backports (nothing is installed) and
# chosen through VK_DRIVER_FILES.
#
# Usage: scripts/check_lavapipe_backports.sh [TEST_BINARY [GTEST_OPTION...]]
#        (default build/release/tests/gpuscope_device_tests; options such as
#        --gtest_repeat=N go to the test binary, as bench/lavapipe_caches.sh
#        passes them). The test's output is kept in build/mesa-backports/latency_test.log.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=${1:-build/release/tests/gpuscope_device_tests}
shift $(($# > 0 ? 1 : 0))
dir=$PWD/build/mesa-backports
suite=bookworm-backports
[[ -x $tests ]] || { echo "check_lavapipe_backports: no test binary $tests (build first)" >&2; exit 1; }

if [[ ! -f $dir/lvp_icd.json ]]; then
  rm -rf "$dir" && mkdir -p "$dir/lists/partial" "$dir/debs"
  echo "deb http://deb.debian.org/debian $suite main" >"$dir/sources.list"
  apt_own=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$dir/lists")
  apt-get "${apt_own[@]}" update -qq
  # The backported driver needs the backported libdrm beside it.
  (cd "$dir/debs" && apt-get "${apt_own[@]}" download -t "$suite" mesa-vulkan-drivers libdrm2 libdrm-amdgpu1)
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  lib=$(find "$dir/root" -name libvulkan_lvp.so | head -n 1)
  [[ -n $lib ]] || { echo "check_lavapipe_backports: no libvulkan_lvp.so in the $suite package" >&2; exit 1; }
  printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' \
    "$lib" >"$dir/lvp_icd.json"
fi
lib=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$dir/lvp_icd.json")
version=$(dpkg-deb -f "$dir"/debs/mesa-vulkan-drivers_*.deb Version)
echo "check_lavapipe_backports: Mesa $version ($lib)"

log=$dir/latency_test.log
VK_DRIVER_FILES=$dir/lvp_icd.json LD_LIBRARY_PATH=$(dirname "$lib") \
  "$tests" --gtest_filter='Chases/LavapipeLatency.*' "$@" 2>&1 | tee "$log"
# gtest has exited 0; a skip would hide that the caches were not read. The
# index chase must pass in every run, the address chase too unless it
# skipped because its own cost buried the L1's step (the device test's
# message for a rise below its least visible step).
runs=$(grep -c '^\[==========\] Running 2 tests' "$log" || true)
index_ok=$(grep -c '^\[       OK \] Chases/LavapipeLatency.FindsTheCpuL1AndL2/1 ' "$log" || true)
address_ok=$(grep -c '^\[       OK \] Chases/LavapipeLatency.FindsTheCpuL1AndL2/0 ' "$log" || true)
address_buried=$(grep -c 'its own cost buries the step from the L1 to the L2' "$log" || true)
skips=$(grep -c '^\[  SKIPPED \] Chases/.* ([0-9]* ms)$' "$log" || true)
((runs > 0 && index_ok == runs)) ||
  { echo "check_lavapipe_backports: the index chase passed in $index_ok of $runs runs" >&2; exit 1; }
((address_ok + address_buried == runs && skips == address_buried)) ||
  { echo "check_lavapipe_backports: the address chase passed in $address_ok of $runs runs and skipped for another reason than a buried L1 step" >&2; exit 1; }
if ((address_buried > 0)); then
  echo "check_lavapipe_backports: under Mesa $version the address chase's L1 step stayed below the device test's least visible step in $address_buried of $runs runs (skipped, saying so); the index chase read both caches in every run"
fi
