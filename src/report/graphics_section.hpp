// The reports' graphics section (issue 15, "people would rather look"): the
// raster order as a picture with the found tile grid, the binning strip, the
// tile-memory knee, fill-rate bars, framebuffer compression and transaction
// elimination side by side, and the short graphics block of the spec sheet
// and report.md. It reads the graphics series and finding ids of the
// contract (docs/results-format.md); with none of them it adds nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/results.hpp"
#include "report/html_builder.hpp"
#include "report/report_run.hpp"

namespace gpuscope {

// Series drawn as pictures here and left out of report.html's chart data
// (a trace has a point per fragment: as a line chart it says nothing and
// weighs megabytes): graphics.raster.order and graphics.raster.binning.
bool drawn_as_picture(const std::string& series_id);
// Series whose figure stands in the graphics section rather than among the
// charts: the pictures, and graphics.tile_memory (a chart report.js draws).
bool shown_in_graphics_section(const std::string& series_id);

// The graphics section of report.html: "" when no run has a graphics series
// or finding. Figures carry the anchors chart_anchor() gives their series,
// so that findings' evidence links land on them.
html::Markup graphics_section_html(const std::vector<ReportRun>& runs);

// What report.js draws over graphics.tile_memory for one run, from its
// graphics.tile.memory_bytes: {"markers": [the knee, a vertical line at the
// bytes per pixel where the largest tile stops fitting], "guides": [{run,
// label, points: [[x, y], ...]}: tile pixels = memory / bytes per pixel]}.
// Empty lists without the finding or the series' points.
nlohmann::json tile_memory_overlays(const Series& tile_memory, size_t run_index, const Results& r);

// One line of the spec sheet's graphics block: "tile" "64 x 64 px,
// row-major, bins primitives".
struct GraphicsLine {
  std::string label;
  std::string text;
  double confidence = 1;        // the least of its findings'
  bool low_confidence = false;  // any of its findings below 0.5 (the text marks which with "?")
  std::vector<std::string> finding_ids;
};
// The block: tile size, order and binning; tile memory; ROP and texture
// fill rates. Empty without those findings.
std::vector<GraphicsLine> graphics_summary(const Results& r);

}  // namespace gpuscope
