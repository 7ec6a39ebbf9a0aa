// From stored series to findings: the one entry point `run` and `analyze`
// share, so a results file can always be re-read without the device.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <cstddef>
#include <vector>

namespace gpuscope::analysis {

// What every analysis may assume of a series, as every probe writes it: at
// most kMaxSeriesPoints points (kMaxTracePoints for raster traces), x
// strictly increasing, x, y and each sample finite, non-negative (sizes,
// times, rates, counts) and at most
// kMaxSeriesValue, at most kMaxPointSamples samples per point, and an id no
// earlier series has.
inline constexpr size_t kMaxSeriesPoints = 4096;  // real runs: at most 72
// Raster traces (series ids "graphics.raster.*") hold a point per ticket, up
// to this many.
inline constexpr size_t kMaxTracePoints = size_t{1} << 20;
inline constexpr size_t kMaxPointSamples = 4096;  // real runs: at most 50
inline constexpr double kMaxSeriesValue = 1e15;   // a PiB, or 11 days in ns

// The series of `r` that break those promises, each with the reason, in the
// order of r.series. Analysis sets them aside.
std::vector<Skipped> unusable_series(const Results& r);

// Every finding the usable series in `r` support, plus what the device
// reported. Throws UsageError when a series' meta holds a value of a type
// the analysis of that series cannot read.
std::vector<Finding> analyze_all(const Results& r);

// The same, with what was looked for and not found and why (Results::unfound).
struct Analysis {
  std::vector<Finding> findings;
  std::vector<Unfound> unfound;
};
Analysis analyze_with_gaps(const Results& r);

}  // namespace gpuscope::analysis
