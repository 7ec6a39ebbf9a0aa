# Cross-compiling for 64-bit Arm Linux with Debian's cross toolchain
# (crossbuild-essential-arm64) and arm64 multiarch packages (libfmt-dev:arm64,
# zlib1g-dev:arm64); scripts/check_arm64.sh installs them. Binaries run here
# under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The cross toolchain's own root, then the host's: multiarch packages put
# their arm64 libraries in /usr/lib/aarch64-linux-gnu, which the library
# architecture above makes the first place searched under /.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# Header-only dependencies (nlohmann-json, CLI11, the OpenCL headers) and
# the report's Chart.js are architecture-independent files of the host.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
