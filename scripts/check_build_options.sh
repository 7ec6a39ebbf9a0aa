#!/usr/bin/env bash
# Checks that every build README names configures and builds:
#   default                      OpenCL and Vulkan, with the tests
#   -DGPUSCOPE_WITH_OPENCL=OFF   Vulkan alone, no tests
#   -DGPUSCOPE_WITH_VULKAN=OFF   OpenCL alone (Vulkan's default where its
#                                packages are missing), with the tests
#   both OFF                     the sims, analyze, report and compare
# Each is configured from scratch in a folder of its own (what a first
# `cmake` does: packages looked for afresh), then built in BUILD_DIR switched
# to it, so that only what the option changes is built: the backend's own
# files (src/backends/<api>/backend.cmake), src/backends/registry.cpp, the
# Vulkan test binaries (gpuscope_<kind>_vulkan_tests) and the links.
# BUILD_DIR is switched back to both backends on at the end, and built
# again, so it ends as it began.
#
# Usage: scripts/check_build_options.sh [BUILD_DIR]   (default build/release,
# configured by `cmake --preset release` and built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[[ -f $build/CMakeCache.txt ]] || { echo "check_build_options: configure $build first (cmake --preset release)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Each combination, then the backends `gpuscope list --verbose` must name
# (its first lines: one a backend compiled in, whether or not its library is
# found). The default comes last, leaving BUILD_DIR as it began.
combinations=(
  "-DGPUSCOPE_WITH_OPENCL=OFF -DGPUSCOPE_WITH_VULKAN=ON:vulkan,sim"
  "-DGPUSCOPE_WITH_OPENCL=OFF -DGPUSCOPE_WITH_VULKAN=OFF:sim"
  "-DGPUSCOPE_WITH_OPENCL=ON -DGPUSCOPE_WITH_VULKAN=OFF:opencl,sim"
  ":opencl,vulkan,sim"
)
started=$(date +%s)
for combination in "${combinations[@]}"; do
  options=${combination%%:*}
  expected=${combination#*:}
  name=${options:-default}
  start=$(date +%s)
  # shellcheck disable=SC2086  # the options are words
  cmake -S . -B "$scratch/${name// /_}" -DCMAKE_BUILD_TYPE=Release $options >"$scratch/configure.log" 2>&1 ||
    { cat "$scratch/configure.log" >&2; echo "check_build_options: $name: configure failed" >&2; exit 1; }
  configured=$(date +%s)
  # shellcheck disable=SC2086
  cmake "$build" ${options:--DGPUSCOPE_WITH_OPENCL=ON -DGPUSCOPE_WITH_VULKAN=ON} >/dev/null
  cmake --build "$build" -j2 >"$scratch/build.log" 2>&1 ||
    { tail -50 "$scratch/build.log" >&2; echo "check_build_options: $name: build failed" >&2; exit 1; }
  backends=$("$build/gpuscope" list --verbose | awk 'NF == 0 {exit} {print $1}' | paste -sd,)
  [[ $backends == "$expected" ]] ||
    { echo "check_build_options: $name: backends $backends, expected $expected" >&2; exit 1; }
  echo "check_build_options: $name: configured in $((configured - start)) s, built in $(($(date +%s) - configured)) s ($backends)"
done
echo "check_build_options: every combination configured and built in $(($(date +%s) - started)) s"
