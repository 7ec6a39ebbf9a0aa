// Linux's own account of the CPU's caches, for tests that check a CPU
// device's cache findings against it.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace gpuscope::test {

// The data (or unified) caches of cpu0 by level, in bytes; empty where
// /sys has none.
inline std::map<int, double> sysfs_data_caches() {
  std::map<int, double> sizes;
  for (int i = 0; i < 8; ++i) {
    const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream level(dir / "level"), type(dir / "type"), size(dir / "size");
    int l = 0;
    std::string t, s;
    if (!(level >> l) || !(type >> t) || !(size >> s)) continue;
    if (t == "Instruction") continue;
    double bytes = std::stod(s);
    if (s.back() == 'K') bytes *= 1024;
    if (s.back() == 'M') bytes *= 1024 * 1024;
    sizes[l] = bytes;
  }
  return sizes;
}

}  // namespace gpuscope::test
