#include "kernels/kernel_sources.hpp"

namespace gpuscope {

const KernelSource* find_kernel_source(std::string_view path) {
  for (const auto& k : embedded_kernels())
    if (k.path == path) return &k;
  return nullptr;
}

}  // namespace gpuscope
