// From stored series to findings: the one entry point `run` and `analyze`
// share, so a results file can always be re-read without the device.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <vector>

namespace gpuscope::analysis {

// Every finding the series in `r` support, plus what the device reported.
std::vector<Finding> analyze_all(const Results& r);

}  // namespace gpuscope::analysis
