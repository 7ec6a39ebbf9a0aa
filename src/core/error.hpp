// Error kinds that map to the command line's exit codes (see docs/results-format.md):
// UsageError -> 2 (bad input), everything else -> 1 (failure during a run).
#pragma once

#include <stdexcept>
#include <string>

namespace gpuscope {

// Bad usage or unreadable input: exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device API call failed.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An allocation the device refused; callers may retry smaller.
struct OutOfResources : DeviceError {
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
