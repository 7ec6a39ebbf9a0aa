#include "report/assets.hpp"

#include <stdexcept>
#include <string>

namespace gpuscope {

std::string_view asset_text(std::string_view name) {
  for (const auto& a : embedded_assets())
    if (a.name == name) return a.text;
  throw std::out_of_range("no embedded asset named " + std::string(name));
}

}  // namespace gpuscope
