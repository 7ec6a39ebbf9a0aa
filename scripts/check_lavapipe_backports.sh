#!/usr/bin/env bash
# Runs the lavapipe chase test (Chases/LavapipeLatency: the latency probe by
# address and by index) under bookworm-backports' Mesa 25, and fails if it
# fails or skips: Debian 12's Mesa 22.3 and Mesa 25 load a chase's addresses
# differently (README, "Vulkan"), and the chase must run, validate and give
# its curve under both. Only this test runs under it: its llvmpipe crashes
# in textured fragment shaders on some hosts (a 32-byte aligned AVX store to
# a 16-byte aligned stack slot in its JIT code), which the graphics tests
# reach. How close the chase's
# readings come to the CPU's caches under either Mesa is reported by
# bench/lavapipe_caches.sh, not tested.
#
# The driver is unpacked into build/mesa-backports
# (scripts/unpack_lavapipe_backports.sh) and chosen through VK_DRIVER_FILES.
#
# Usage: scripts/check_lavapipe_backports.sh [TEST_BINARY [GTEST_OPTION...]]
#        (default build/release/tests/gpuscope_device_tests). The test's
#        output is kept in build/mesa-backports/backports_tests.log.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=${1:-build/release/tests/gpuscope_device_tests}
shift $(($# > 0 ? 1 : 0))
[[ -x $tests ]] || { echo "check_lavapipe_backports: no test binary $tests (build first)" >&2; exit 1; }
icd=$(scripts/unpack_lavapipe_backports.sh)
dir=$(dirname "$icd")
lib=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$icd")
version=$(dpkg-deb -f "$dir"/debs/mesa-vulkan-drivers_*.deb Version)
echo "check_lavapipe_backports: Mesa $version ($lib)"

log=$dir/backports_tests.log
VK_DRIVER_FILES=$icd LD_LIBRARY_PATH=$(dirname "$lib") \
  "$tests" --gtest_filter='Chases/LavapipeLatency.*' "$@" 2>&1 | tee "$log"
# gtest has exited 0; a skip would hide that the driver was not lavapipe.
if grep -q '^\[  SKIPPED \]' "$log"; then
  echo "check_lavapipe_backports: a test skipped under Mesa $version" >&2
  exit 1
fi
