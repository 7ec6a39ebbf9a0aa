#include "backends/backend.hpp"
#include "backends/sim/sim_device.hpp"
#include "compiled_backends.hpp"
#include "core/error.hpp"
#if GPUSCOPE_WITH_OPENCL
#include "backends/opencl/opencl_backend.hpp"
#include "backends/opencl/opencl_library.hpp"
#endif
#if GPUSCOPE_WITH_VULKAN
#include "backends/vulkan/vulkan_backend.hpp"
#endif

#include <fmt/format.h>

#include <cstdlib>

namespace gpuscope {

void configure_backends(const BackendSettings& s) {
#if GPUSCOPE_WITH_OPENCL
  if (s.opencl_library) set_opencl_library_path(*s.opencl_library);
  if (s.opencl_library || std::getenv("GPUSCOPE_OPENCL_LIBRARY")) load_opencl_library();
#else
  if (s.opencl_library)
    throw UsageError("--opencl-library: this gpuscope was built without OpenCL (GPUSCOPE_WITH_OPENCL=OFF)");
#endif
}

std::vector<std::unique_ptr<Backend>> make_backends() {
  std::vector<std::unique_ptr<Backend>> backends;
#if GPUSCOPE_WITH_OPENCL
  backends.push_back(make_opencl_backend());
#endif
#if GPUSCOPE_WITH_VULKAN
  backends.push_back(make_vulkan_backend());  // after OpenCL: the first OpenCL GPU stays the default
#endif
  backends.push_back(sim::make_sim_backend());  // after real devices: never the default
  return backends;
}

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> all;
  for (auto& b : make_backends()) {
    auto devices = b->enumerate();
    all.insert(all.end(), devices.begin(), devices.end());
  }
  return all;
}

namespace {

std::string valid_ids(const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return "no devices found (is an OpenCL driver installed? try PoCL: pocl-opencl-icd)";
  std::string out = "valid device IDs:";
  for (const auto& d : devices) out += fmt::format("\n  {:<14} {:<5} {}", d.id, d.type, d.name);
  return out;
}

}  // namespace

std::unique_ptr<Device> open_device(const std::string& id) {
  auto backends = make_backends();
  // A device named by ID is looked for in its own backend first, so that
  // opening an OpenCL device does not start the Vulkan driver (whose
  // threads would share the machine with the measurement) and vice versa.
  if (!id.empty()) {
    const std::string prefix = id.substr(0, id.find(':'));
    for (auto& b : backends) {
      if (b->name() != prefix) continue;
      bool listed = false;
      for (const auto& d : b->enumerate()) listed = listed || d.id == id;
      if (listed || b->opens_unlisted(id)) return b->open(id);
    }
  }
  std::vector<DeviceInfo> devices;
  for (auto& b : backends) {
    auto ds = b->enumerate();
    devices.insert(devices.end(), ds.begin(), ds.end());
  }
  std::string chosen = id;
  if (chosen.empty()) {
    for (const auto& d : devices)
      if (d.type == "gpu") {
        chosen = d.id;
        break;
      }
    // A simulated device is never chosen by default: it must be asked for.
    for (const auto& d : devices)
      if (chosen.empty() && d.type != "sim") chosen = d.id;
    if (chosen.empty()) throw UsageError(valid_ids(devices));
  }
  const auto colon = chosen.find(':');
  const std::string prefix = chosen.substr(0, colon);
  bool known = false;
  for (const auto& d : devices) known = known || d.id == chosen;
  for (auto& b : backends) {
    if (b->name() == prefix && (known || b->opens_unlisted(chosen))) return b->open(chosen);
  }
  throw UsageError(fmt::format("unknown device '{}'; {}", chosen, valid_ids(devices)));
}

}  // namespace gpuscope
