// Scratch directories for tests that write files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace gpuscope::test {

// An empty directory under the system's temporary directory, named
// "gpuscope_<name>_<pid>"; whatever an earlier run left there is removed
// first. Tests of one binary that may run at the same time (ctest -j) give
// different names; the process id keeps two checkouts' runs apart.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace gpuscope::test
