// Arithmetic throughput and latency findings from the `compute` and
// `oplatency` series (probes/compute/): rates per type and op, their
// ratio to fp32 FMA rounded to a simple fraction, dual issue, latency in ns
// and in cycles.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <vector>

namespace gpuscope::analysis {

// A measured rate ratio and the simple ratio it is read as: the nearest, in
// log2, of 1/64, 1/32, ..., 1/2, 1, 2, 4. log2_error is |log2(raw/rounded)|
// (0.5 would be exactly half-way between two candidates).
struct RateRatio {
  double raw = 0;
  double rounded = 0;
  double log2_error = 0;
};
RateRatio round_rate_ratio(double raw);

// Dual issue: mixing two ops half and half in one instruction stream
// retires more ops per second than issuing them one after the other would
// (the harmonic mean of the two rates alone), by more than `threshold`. The
// faster op alone is not the baseline: where it already uses both pipes
// (Bifrost's adds run on the FMA pipe and the ADD pipe), a dual-issuing mix
// only matches it. All rates in Gop/s.
struct DualIssue {
  bool detected = false;
  double gain = 0;  // mixed / (1 / (0.5 / alone_a + 0.5 / alone_b))
};
DualIssue detect_dual_issue(double mixed_gops, double alone_a_gops, double alone_b_gops,
                            double threshold = 1.15);

// ns at a clock in MHz -> cycles.
double cycles_from_ns(double ns, double clock_mhz);

// A rate's or a time's confidence from its samples' spread: 0.9 for a
// clean point (relative spread under 2%), less as the spread grows, at
// least 0.4.
double spread_confidence(const Point& p);

// Gop/s -> ops per clock per compute unit.
double ops_per_clock_per_cu(double gops, double compute_units, double clock_mhz);

// Every compute.* finding the series of `r` support.
std::vector<Finding> compute_findings(const Results& r);

}  // namespace gpuscope::analysis
