#!/usr/bin/env bash
# Installs what gpuscope needs to build and test, from Debian's packages.
# Idempotent: installs only what is missing, and does nothing when all is there.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  ocl-icd-libopencl1 opencl-headers opencl-clhpp-headers  # Khronos ICD loader (opened at run time), C and C++ headers
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev  # header-only or static at link time
  zlib1g-dev                                               # libz.a: the report's PNG pictures, linked statically
  pocl-opencl-icd clinfo                                   # the CPU as an OpenCL device
  libvulkan-dev libvulkan-volk-dev glslang-dev spirv-tools  # Vulkan headers, volk (loader opened at run time), static glslang
  glslang-tools                                            # glslangValidator: glslang-dev's CMake package refuses to load without it
  mesa-vulkan-drivers vulkan-validationlayers              # lavapipe (the CPU as a Vulkan device) and the Khronos validation layer
  libjs-chart.js                                           # the chart library report.html embeds
  chromium                                                 # headless: the report's real-browser test
  clang libclang-rt-14-dev                                 # libFuzzer and sanitizer runtimes: fuzz/ (docs/fuzzing.md)
  python3                                                  # bench/recovery_benchmark.py, whose CI subset is a test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
