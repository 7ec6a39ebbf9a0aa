// Matrix-engine findings from the `matrix` probe's series
// (probes/matrix.cpp): per listed type and shape its throughput and its
// dependent-chain latency, and the best of them against the same device's
// FP32 FMA rate from the compute probe.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <vector>

namespace gpuscope::analysis {

// Every compute.matrix.* finding the series of `r` support. `found` are the
// findings analysed before (a measured clock, device.measured_clock_mhz,
// turns latencies into cycles in preference to the reported clock).
std::vector<Finding> matrix_findings(const Results& r, const std::vector<Finding>& found);

}  // namespace gpuscope::analysis
