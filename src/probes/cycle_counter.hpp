// Kernels that read their core's cycle counter where the device lets them.
#pragma once

#include "backends/backend.hpp"

#include <string>

namespace gpuscope {

struct CounterKernel {
  Kernel* kernel = nullptr;
  bool reads_counter = false;  // built with nv_ptx = true: the kernel reads NVIDIA's SM cycle counter
  std::string note;            // why it does not, where the device offered a counter but the build failed
};

// Builds `family`/`entry` with nv_ptx = true where the device's features
// offer a cycle counter through NVIDIA inline PTX and the build succeeds,
// else with nv_ptx = false.
CounterKernel build_counter_kernel(Device& dev, const std::string& family, const std::string& entry);

}  // namespace gpuscope
