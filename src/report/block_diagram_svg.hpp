// The block diagram as SVG: report.html inlines it at the top, and every run
// writes it beside report.md (diagram.svg). The compute unit's boxes sit in a
// stacked frame (one per unit), what could not be placed in a dashed band
// under it, the on-chip boxes the units share in a frame below (a split
// cache's halves side by side), then DRAM and the host link. Each box links
// to its evidence chart and each value to its finding.
#pragma once

#include <string>

#include "report/block_diagram.hpp"
#include "report/html_builder.hpp"

namespace gpuscope {

// The file diagram.svg beside report.md and report.html.
inline constexpr const char* kDiagramFileName = "diagram.svg";

// `page`: the page the links point into: "" when the SVG is inside
// report.html, "report.html" for the file beside it. Box links are
// PAGE#chart-<series>, value links PAGE#finding-<id> (html_report.hpp's
// anchors); every <a> of a box carries data-box="<box id>", and an uncertain
// box or value carries class "uncertain" (drawn dashed, value marked "?").
std::string render_block_diagram_svg(const BlockDiagram& d, const std::string& page = "");
// The same, as markup for report.html (html_builder.hpp).
html::Markup block_diagram_svg_markup(const BlockDiagram& d, const std::string& page = "");

}  // namespace gpuscope
