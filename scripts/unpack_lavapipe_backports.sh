#!/usr/bin/env bash
# Unpacks bookworm-backports' lavapipe (Mesa 25) and the libdrm it needs into
# build/mesa-backports (nothing is installed; the first call downloads), and
# prints the ICD file that chooses it: VK_DRIVER_FILES=$(this script).
# Used by scripts/check_lavapipe_backports.sh and bench/lavapipe_caches.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/mesa-backports
suite=bookworm-backports
if [[ ! -f $dir/lvp_icd.json ]]; then
  rm -rf "$dir" && mkdir -p "$dir/lists/partial" "$dir/debs"
  echo "deb http://deb.debian.org/debian $suite main" >"$dir/sources.list"
  apt_own=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$dir/lists")
  apt-get "${apt_own[@]}" update -qq >&2
  # The backported driver needs the backported libdrm beside it.
  (cd "$dir/debs" && apt-get "${apt_own[@]}" download -t "$suite" mesa-vulkan-drivers libdrm2 libdrm-amdgpu1 >&2)
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  lib=$(find "$dir/root" -name libvulkan_lvp.so | head -n 1)
  [[ -n $lib ]] || { echo "unpack_lavapipe_backports: no libvulkan_lvp.so in the $suite package" >&2; exit 1; }
  printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' \
    "$lib" >"$dir/lvp_icd.json"
fi
echo "$dir/lvp_icd.json"
