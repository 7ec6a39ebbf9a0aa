// Recorded real curves (tests/data, described in its README) for the
// analysis tests.
#pragma once

#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include <string>

namespace gpuscope {

// tests/data/NAME with every finding recomputed from its series: the stored
// findings may come from an older analysis.
inline Results load_recorded(const std::string& name) {
  Results r = read_results_file(std::string(GPUSCOPE_TEST_DATA) + "/" + name);
  r.findings = analysis::analyze_all(r);
  return r;
}

}  // namespace gpuscope
