// report.html: one self-contained page (no network, no files beside it): the
// first screen (first_screen.hpp: the block diagram beside the headline
// curves), what could not be measured, the findings by area, the graphics
// section where a run has graphics data (graphics_section.hpp: the raster
// order as a picture, the tile-memory knee, fill-rate bars) and a chart for
// every other series, each finding linked to the chart it was read from,
// then the device and the exact command. Chart.js is inlined from the copy embedded
// at build time.
#pragma once

#include <string>
#include <vector>

#include "core/results.hpp"
#include "report/report_run.hpp"

namespace gpuscope {

// A report of runs[0] with the others beside it: findings side by side with
// the ratio to runs[0], their curves overlaid on runs[0]'s charts, and their
// levels and knees drawn on the curve they came from. One run gives a plain
// report; `gpuscope compare` passes several.
std::string render_html_report(const std::vector<ReportRun>& runs);

// Text for HTML element content and attribute values: & < > " ' escaped
// (html::escape; the reports build their markup with html_builder.hpp).
std::string html_escape(const std::string& s);

// A chart draws at most this many points of a trace: a canvas about 1000 px
// wide shows no more, and a 12-million-point series made a 289 MB page.
// results.json keeps every point.
inline constexpr size_t kChartPointsDrawn = 4000;

// The points of `s` a chart draws, as indices into s.points in order: every
// one up to kChartPointsDrawn; beyond, the lowest and the highest y of each
// of kChartPointsDrawn / 2 runs of consecutive points, so that a peak or a
// dip one point wide still shows.
std::vector<size_t> drawn_points(const Series& s);

// "42 points", or how a longer series was drawn (drawn_points).
std::string points_caption(const Series& s);

// JSON that is safe inside <script>: < > & escaped as \u003c \u003e \u0026
// (they only ever occur inside JSON strings), so a driver's device name
// "</script><script>..." stays data.
std::string json_for_script(const nlohmann::json& j);

// The fragment id of a series' chart: "chart-" and the id with every
// character outside [A-Za-z0-9._-] replaced by '-'.
std::string chart_anchor(const std::string& series_id);
// The fragment id of a finding's row: "finding-" and the id, cleaned alike.
std::string finding_anchor(const std::string& finding_id);

// A run's colour in every legend, swatch and curve (report.js's palette).
std::string run_colour(size_t run_index);

// Whether a series is drawn on a log x axis: a meta "x_scale" of "log" or
// "linear" decides; else positive x spanning at least 16x (a geometric sweep).
bool wants_log_x(const Series& s);
// The same for y: meta "y_scale", else positive y spanning at least 10x.
bool wants_log_y(const Series& s);

}  // namespace gpuscope
