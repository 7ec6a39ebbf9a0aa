#include "kernels/kernel_sources.hpp"

#include <stdexcept>
#include <string>

namespace gpuscope {

const KernelSource& kernel_source(std::string_view file) {
  for (const auto& k : embedded_kernels())
    if (k.file == file) return k;
  throw std::out_of_range("no embedded kernel source named " + std::string(file));
}

}  // namespace gpuscope
