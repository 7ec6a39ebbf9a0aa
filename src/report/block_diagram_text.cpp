#include "report/block_diagram_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace gpuscope {

namespace {

constexpr size_t kTitleColumns = 14;

std::string field_text(const DiagramField& f) { return f.label + " " + f.value + (f.uncertain ? "?" : ""); }

// A box as lines of `width` columns: its title, then its fields joined by
// " | ", wrapped under the fields' column.
std::vector<std::string> box_lines(const DiagramBox& b, size_t width) {
  std::vector<std::string> lines;
  std::string title = b.title + (b.uncertain ? "?" : "");
  std::string line =
      title + std::string(title.size() < kTitleColumns ? kTitleColumns - title.size() : 1, ' ');
  const size_t indent = std::max(kTitleColumns, title.size() + 1);
  bool first = true;
  for (const auto& f : b.fields) {
    const std::string text = field_text(f);
    const std::string sep = first ? "" : " | ";
    if (!first && line.size() + sep.size() + text.size() > width) {
      lines.push_back(line);
      line = std::string(indent, ' ') + text;
    } else {
      line += sep + text;
    }
    first = false;
  }
  lines.push_back(line);
  return lines;
}

std::vector<const DiagramBox*> placed(const BlockDiagram& d, Placement p) {
  std::vector<const DiagramBox*> out;
  for (const auto& b : d.boxes)
    if (b.placement == p) out.push_back(&b);
  return out;
}

}  // namespace

std::string format_block_diagram_text(const BlockDiagram& d, size_t width) {
  std::string out;
  if (const auto per_cu = placed(d, Placement::kPerComputeUnit); !per_cu.empty()) {
    const size_t inner = width - 4;  // "| " and " |"
    const std::string head =
        d.compute_units > 1 ? fmt::format(" {} compute units, each: ", d.compute_units) : " compute unit: ";
    out += "+-" + head + std::string(width > head.size() + 3 ? width - head.size() - 3 : 0, '-') + "+\n";
    for (const DiagramBox* b : per_cu)
      for (const auto& line : box_lines(*b, inner))
        out += "| " + line + std::string(inner > line.size() ? inner - line.size() : 0, ' ') + " |\n";
    out += "+" + std::string(width - 2, '-') + "+\n";
  }
  const auto section = [&](Placement p, const char* heading) {
    const auto boxes = placed(d, p);
    if (boxes.empty()) return;
    out += std::string("  ") + heading + "\n";
    for (const DiagramBox* b : boxes)
      for (const auto& line : box_lines(*b, width - 2)) out += "  " + line + "\n";
  };
  section(Placement::kUnknown, "not measured whether per compute unit or shared:");
  section(Placement::kShared, "shared by the device:");
  return out;
}

}  // namespace gpuscope
