// OpenCL C sources compiled into the binary (see cmake/embed_kernels.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace gpuscope {

struct KernelSource {
  std::string_view file;  // e.g. "latency.cl"
  std::string_view text;
};

const std::vector<KernelSource>& embedded_kernels();

// The source of `file`; throws std::out_of_range if it was not embedded.
const KernelSource& kernel_source(std::string_view file);

}  // namespace gpuscope
