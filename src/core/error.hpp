// Error kinds that map to the command line's exit codes (see docs/results-format.md):
// UsageError -> 2 (bad input or an unusable output), everything else -> 1
// (failure during a run).
#pragma once

#include <stdexcept>
#include <string>

namespace gpuscope {

// Bad usage or unreadable input: exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An output gpuscope cannot write: a target that exists and is not a
// regular file, a directory it cannot create, a full disk, a standard output
// that refuses bytes. Exit code 2, as for input it cannot read.
struct OutputError : UsageError {
  using UsageError::UsageError;
};

// A device API call failed.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An allocation the device refused; callers may retry smaller.
struct OutOfResources : DeviceError {
  using DeviceError::DeviceError;
};

// A launch (or another command on the device's queue) ran past the time its
// backend waits for it (backends/launch_bound.hpp): the device hangs, or runs
// far slower than the launch was planned for. No API gpuscope uses cancels a
// launch, so the backend waits a further grace as long as the bound:
// device_lost is false when the launch ended within it (the device is
// usable again; the probe failed, the run goes on), true when it was still
// running (the device object that ran it is abandoned, never waited for or
// freed again, and the run stops with what finished).
struct LaunchTimeout : DeviceError {
  LaunchTimeout(const std::string& what, bool lost) : DeviceError(what), device_lost(lost) {}
  bool device_lost;
};

// A call on a device abandoned after a LaunchTimeout with device_lost.
struct DeviceLost : DeviceError {
  using DeviceError::DeviceError;
};

// A kernel failed to compile; `log` is the compiler's build log.
struct BuildError : DeviceError {
  BuildError(const std::string& what, std::string build_log) : DeviceError(what), log(std::move(build_log)) {}
  std::string log;
};

// The device or backend cannot run a probe at all (no image support, no
// fp64, an API feature the backend lacks). The probe is skipped with this
// reason and the run goes on with exit code 0.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A kernel produced a wrong result: the measurement cannot be trusted.
struct ValidationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gpuscope
