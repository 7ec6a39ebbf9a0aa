// Files compiled into the binary for the reports (cmake/embed_assets.cmake):
// the chart library report.html inlines, and the reference profiles of known
// devices (data/reference/*.json), so that a binary copied to a board needs
// no data files beside it.
#pragma once

#include <string_view>
#include <vector>

namespace gpuscope {

struct Asset {
  std::string_view name;  // "chart.min.js", "reference/h100.json"
  std::string_view text;
};

const std::vector<Asset>& embedded_assets();

// The text of `name`; throws std::out_of_range if it was not embedded.
std::string_view asset_text(std::string_view name);

}  // namespace gpuscope
