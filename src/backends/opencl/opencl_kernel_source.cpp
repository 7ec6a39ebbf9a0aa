#include "backends/opencl/opencl_kernel_source.hpp"

#include <cctype>

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

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string opencl_build_options(const KernelSpec& spec) {
  std::string out;
  auto define = [&](const std::string& name, std::string_view value) {
    out += (out.empty() ? "-D" : " -D") + name + "=" + std::string(value);
  };
  for (const auto& [name, param] : spec.params) {
    const std::string macro = upper(name);
    const auto& v = param.value();
    if (const auto* i = std::get_if<int64_t>(&v)) {
      define(macro, std::to_string(*i));
    } else if (const auto* b = std::get_if<bool>(&v)) {
      define(macro, *b ? "1" : "0");
    } else if (const auto* s = std::get_if<Scalar>(&v)) {
      define(macro, opencl_type_name(*s));
      define(macro + "_IS_" + upper(scalar_tag(*s)), "1");
    } else {
      define(macro + "_" + upper(std::get<std::string>(v)), "1");
    }
  }
  return out;
}

}  // namespace gpuscope
