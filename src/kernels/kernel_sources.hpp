// Kernel sources compiled into the binary (see cmake/embed_kernels.cmake),
// named by their path below src/kernels: "opencl/latency.cl".
#pragma once

#include <string_view>
#include <vector>

namespace gpuscope {

struct KernelSource {
  std::string_view path;  // "opencl/latency.cl"
  std::string_view text;
};

const std::vector<KernelSource>& embedded_kernels();

// The source at `path`, or nullptr when none was embedded there.
const KernelSource* find_kernel_source(std::string_view path);

}  // namespace gpuscope
