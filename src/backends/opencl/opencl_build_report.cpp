#include "backends/opencl/opencl_build_report.hpp"

#include <algorithm>
#include <cstring>
#include <regex>

namespace gpuscope {

std::optional<uint32_t> ptxas_registers(const std::string& log, const std::string& entry) {
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex header(R"(Compiling entry function '([^']+)')");
  // The log's sections, each starting at an entry-function header; text
  // before the first header belongs to no named function.
  std::string::const_iterator from = log.begin(), to = log.end();
  bool named = false;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), header); it != std::sregex_iterator(); ++it) {
    if (named) {
      to = log.begin() + it->position();
      break;
    }
    if ((*it)[1].str() == entry) {
      named = true;
      from = log.begin() + it->position();
    }
  }
  if (!named && std::regex_search(log, header)) return std::nullopt;  // other functions only
  std::smatch m;
  if (!std::regex_search(from, to, m, used)) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(m[1].str()));
}

std::string program_binary_format(std::span<const std::byte> binary) {
  const auto* bytes = reinterpret_cast<const char*>(binary.data());
  if (binary.size() >= 4 && std::memcmp(bytes, "\x7f" "ELF", 4) == 0) return "elf";
  const std::string head(bytes, std::min<size_t>(binary.size(), 4096));
  if (head.find(".version") != std::string::npos && head.find(".target") != std::string::npos) return "ptx";
  if (head.rfind("POCL", 0) == 0 || head.find("pocl") != std::string::npos) return "pocl";
  if (binary.size() >= 4 && std::memcmp(bytes, "BC\xc0\xde", 4) == 0) return "llvm-bitcode";
  return "unknown";
}

}  // namespace gpuscope
