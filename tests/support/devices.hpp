// The OpenCL CPU device (PoCL on the CI machines) the device tests run on.
#pragma once

#include "backends/backend.hpp"

#include <string>

namespace gpuscope {

// Its ID, or "" when no CPU device is installed.
inline std::string cpu_device_id() {
  for (const auto& d : enumerate_devices())
    if (d.type == "cpu") return d.id;
  return "";
}

}  // namespace gpuscope
