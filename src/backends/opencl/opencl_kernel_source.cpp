#include "backends/opencl/opencl_kernel_source.hpp"

#include "backends/kernel_defines.hpp"

namespace gpuscope {

std::string opencl_source_path(const KernelSpec& spec) { return "opencl/" + spec.family + ".cl"; }

std::string_view opencl_type_name(Scalar s) {
  switch (s) {
    case Scalar::i8: return "char";
    case Scalar::i16: return "short";
    case Scalar::i32: return "int";
    case Scalar::i64: return "long";
    case Scalar::u32: return "uint";
    case Scalar::u64: return "ulong";
    case Scalar::f16: return "half";
    case Scalar::f32: return "float";
    case Scalar::f64: return "double";
  }
  return "?";
}

std::string opencl_build_options(const KernelSpec& spec) {
  std::string out;
  for (const auto& [name, value] : kernel_defines(spec, opencl_type_name))
    out += (out.empty() ? "-D" : " -D") + name + "=" + value;
  return out;
}

}  // namespace gpuscope
