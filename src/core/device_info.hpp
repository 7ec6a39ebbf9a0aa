// What a device says about itself, as plain data (no API headers), so that
// analysis and reports can use it without a device.
#pragma once

#include "core/driver_facts.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

struct DeviceInfo {
  std::string id;  // "opencl:P:D" or "sim:NAME"
  std::string name;
  std::string vendor;
  std::string type;  // "gpu", "cpu", "accelerator", "sim", "other"
  std::string api;   // e.g. "OpenCL 3.0 CUDA 12.4"
  std::string driver_version;
  std::string platform;  // platform name (OpenCL) or backend name
  uint32_t compute_units = 0;
  uint32_t clock_mhz = 0;  // as reported; may be a max or a nominal clock
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t local_mem_bytes = 0;
  bool local_mem_dedicated = false;  // CL_LOCAL vs CL_GLOBAL local memory type
  uint64_t global_cache_bytes = 0;   // what the driver claims; often not a real level
  uint32_t global_cache_line_bytes = 0;
  uint32_t address_bits = 64;
  uint64_t max_work_group_size = 0;
  bool profiling = true;
  std::vector<std::string> extensions;
  // Vendor-specific queries that answered (NVIDIA warp size, Arm core ids, ...).
  nlohmann::json vendor_info = nlohmann::json::object();
  // What the OS driver and vendor libraries said, at the run's start and end
  // (gpuscope run fills it; backends do not).
  std::vector<DriverSnapshot> driver;
};

}  // namespace gpuscope
