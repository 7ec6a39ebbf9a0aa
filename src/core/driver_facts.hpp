// What the operating system's GPU driver and the vendor's management library
// say about a device, as plain data: the claims that gpuscope's measurements
// are put beside (core counts, clocks, the chip's name). Read by
// src/driver/; stored in results.json's device section; never inferred.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope {

// One value the driver gave, with where it came from.
struct DriverFact {
  std::string key;       // e.g. "clock.current_mhz", "cores", "model"; keys in docs/driver-facts.md
  nlohmann::json value;  // a number or a string, as the driver gave it (converted to the unit)
  std::string unit;      // "MHz", "C", "W", "bit", "B", "%", "" for counts, names and masks
  std::string source;    // a file path under the sysfs root, or "NVML nvmlDeviceGetClockInfo(SM)"
};

// Everything read at one moment from one driver.
struct DriverSnapshot {
  std::string when;    // "start" (before the first probe) or "end" (after the last)
  std::string driver;  // "mali_kbase", "kgsl", "amdgpu", "i915", "xe", "nvml", "pci"; "vulkan": what the API said
  std::vector<DriverFact> facts;
  // Files that exist but could not be read or parsed; each was skipped.
  std::vector<std::string> notes;

  const DriverFact* find(const std::string& key) const {
    for (const auto& f : facts)
      if (f.key == key) return &f;
    return nullptr;
  }
};

}  // namespace gpuscope
