// The top of report.html, what a reader sees before scrolling: the block
// diagram of runs[0], and the two headline curves (latency against footprint,
// read bandwidth against footprint) of every measured run, with the known
// GPUs' published figures ready to be switched on beside them. Below it,
// what could not be measured and why. headline.js draws the curves from
// headline_data.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/html_builder.hpp"
#include "report/report_run.hpp"

namespace gpuscope {

// The section: the inline SVG diagram (links into the page), a canvas per
// headline curve (id headline-<name>) and a checkbox per reference profile
// (class "reference-toggle", data-reference=<index into headline_data's
// references>).
html::Markup first_screen_section(const std::vector<ReportRun>& runs);

// What headline.js draws, as JSON:
//   {charts: [{name, title, series, chart: <anchor of the full chart>,
//              x: {name, unit, log}, y: {...},
//              traces: [{run, label, points: [[x, y], ...]}]}],
//    references: [{name, checked, curves: {<chart name>: {
//        steps: [[x0, x1, y, label], ...],  // a level's value over its footprints
//        marks: [[x, label], ...],          // a published capacity without a value on this axis
//        points: [[x, y, source], ...]}}}]}
// The runs given as references are checked, then the known profile the
// device's name names (an H200 run shows the H200's figures); every other
// known profile is listed unchecked.
nlohmann::json headline_data(const std::vector<ReportRun>& runs);

// "Not measured": every run's unmeasured items (unmeasured.hpp), each with
// its reason and a link to the series that records it; "" when none.
html::Markup unmeasured_section(const std::vector<ReportRun>& runs);

}  // namespace gpuscope
