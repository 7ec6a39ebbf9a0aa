// Scratch directories for tests that write files.
#pragma once

#include <filesystem>
#include <string>

namespace gpuscope::test {

// An empty directory under the system's temporary directory, named
// "gpuscope_<name>"; whatever an earlier run left there is removed first.
// Tests that may run at the same time (ctest -j) give different names.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace gpuscope::test
