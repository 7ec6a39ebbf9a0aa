// The summary printed after a run or an analysis: a compact spec sheet of the
// findings, under ~100 columns, memory hierarchy first.
#pragma once

#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/results.hpp"
#include "report/report_run.hpp"

namespace gpuscope {

struct SummaryStyle {
  bool color = false;  // ANSI colours; the caller decides (isatty, NO_COLOR)
};

// `reference` (optional, e.g. reference_as_results of a known device): its
// value for each finding the run has is printed beneath, dim, named after it.
std::string format_summary(const Results& r, const SummaryStyle& style = {}, const Results* reference = nullptr);

// `gpuscope compare`: the runs' findings side by side by area, each with its
// interval, and every run's ratio to the first ("[2]/[1]").
std::string format_comparison(const std::vector<ReportRun>& runs, const SummaryStyle& style = {});

}  // namespace gpuscope
