// Recorded real runs (tests/data/<device>/, described in tests/data/README.md)
// for the analysis tests.
#pragma once

#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include <string>

namespace gpuscope {

// The path of tests/data/NAME ("h200/texture_first.json").
inline std::string recorded_path(const std::string& name) { return std::string(GPUSCOPE_TEST_DATA) + "/" + name; }

// tests/data/NAME as the run wrote it, findings included.
inline Results read_recorded(const std::string& name) { return read_results_file(recorded_path(name)); }

// tests/data/NAME with every finding recomputed from its series: the stored
// findings may come from an older analysis.
inline Results load_recorded(const std::string& name) {
  Results r = read_recorded(name);
  r.findings = analysis::analyze_all(r);
  return r;
}

}  // namespace gpuscope
