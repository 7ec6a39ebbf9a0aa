// Findings of the system probes: host transfers and zero copy (transfer),
// launch overheads (launch), atomic latencies and throughput (atomics),
// resident work-groups (scheduling) and the running clock (clock). Pure
// functions of the stored series; each returns nothing when its series are
// absent, so results without those probes analyse as before.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <optional>
#include <vector>

namespace gpuscope::analysis {

// Robust (Theil-Sen) slope of log(y) against log(x) over the points with
// x >= min_x; nullopt with fewer than 3 such points. 1 means y grows in
// proportion to x (a copy), 0 means y does not depend on x.
std::optional<double> loglog_slope(const Series& s, double min_x);

// A map/unmap whose cost grows with the buffer copies it: slopes below this
// count as size-independent.
inline constexpr double kFlatMapSlope = 0.25;
// A kernel reading a host-allocated buffer at this fraction of the rate it
// reads an ordinary one reads it in place, in the same memory.
inline constexpr double kInPlaceReadRatio = 0.5;

std::vector<Finding> transfer_findings(const Results& r);
std::vector<Finding> launch_findings(const Results& r);
std::vector<Finding> atomics_findings(const Results& r);
std::vector<Finding> scheduling_findings(const Results& r);
std::vector<Finding> clock_findings(const Results& r);

}  // namespace gpuscope::analysis
