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
// ... unless its cost at the largest size would mean copying faster than
// this (bytes per ns of map+unmap): above any host link (PCIe 6 x16 moves
// ~121 GB/s) and any one host's memcpy, so such growth is bookkeeping
// (page tables, cache maintenance), not a copy.
inline constexpr double kCopyCeilingGbps = 150;
// Whether the map+unmap cost series `s` (us against bytes) shows a copy;
// nullopt with too few points.
std::optional<bool> map_copies(const Series& s);
// A kernel reading a host-allocated buffer at this fraction of the rate it
// reads an ordinary one reads it in place, in the same memory. Reads across
// a link are an order of magnitude slower (PCIe 5: ~55 of 4000 GB/s on the
// H200), while on CPU devices, where the read kernel is compute-bound and
// noisy, the two rates were seen to differ by 2x run to run.
inline constexpr double kInPlaceReadRatio = 0.25;

std::vector<Finding> transfer_findings(const Results& r);
std::vector<Finding> launch_findings(const Results& r);
std::vector<Finding> atomics_findings(const Results& r);
std::vector<Finding> scheduling_findings(const Results& r);
std::vector<Finding> clock_findings(const Results& r);

// memory.<level>.latency_cycles for every memory.<level>.latency_ns in
// `found`: at the measured clock (device.measured_clock_mhz in `found`,
// confidence >= 0.5), else at the reported one with less confidence (the
// clock under load may differ); nothing without either.
std::vector<Finding> level_cycle_findings(const Results& r, const std::vector<Finding>& found);

}  // namespace gpuscope::analysis
