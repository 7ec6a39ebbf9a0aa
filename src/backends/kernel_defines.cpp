#include "backends/kernel_defines.hpp"

#include <cctype>

namespace gpuscope {

std::string macro_name(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::pair<std::string, std::string>> kernel_defines(const KernelSpec& spec, TypeNamer type_name) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, param] : spec.params) {
    const std::string macro = macro_name(name);
    const auto& v = param.value();
    if (const auto* i = std::get_if<int64_t>(&v)) {
      out.emplace_back(macro, std::to_string(*i));
    } else if (const auto* b = std::get_if<bool>(&v)) {
      out.emplace_back(macro, *b ? "1" : "0");
    } else if (const auto* s = std::get_if<Scalar>(&v)) {
      out.emplace_back(macro, std::string(type_name(*s)));
      out.emplace_back(macro + "_IS_" + macro_name(scalar_tag(*s)), "1");
    } else {
      out.emplace_back(macro + "_" + macro_name(std::get<std::string>(v)), "1");
    }
  }
  return out;
}

}  // namespace gpuscope
