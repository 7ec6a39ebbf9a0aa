// What every reporter that shows runs side by side takes: one column per run.
#pragma once

#include <string>

#include "core/results.hpp"

namespace gpuscope {

// One column of a report: a run, or a reference profile (reference_as_results)
// whose points are overlaid as markers, not as a measured curve.
struct ReportRun {
  std::string label;  // short name shown in legends and column heads
  const Results* results = nullptr;
  bool reference = false;
};

}  // namespace gpuscope
