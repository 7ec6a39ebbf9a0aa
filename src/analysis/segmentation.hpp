// Optimal piecewise-constant segmentation (change-point detection) of a
// measured curve, and the preparation of a latency curve for it.
//
// Latency curves are segmented in log(latency): cache levels differ by
// ratios (1.5x .. 10x), and timing noise is multiplicative, so in log space a
// step is a difference and the noise is roughly the same size everywhere.
#pragma once

#include "core/series.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace gpuscope::analysis {

// Relative noise below which no point is trusted: timers, clocks and the
// placement of each footprint's buffer vary by ~1% between points even when
// a point's own samples agree perfectly, and a clean synthetic curve must not
// make every rounding difference look significant.
inline constexpr double k_min_relative_noise = 0.015;

// A series' points in log space, ready to segment. Points whose median is
// not a positive finite number (a failed or overflowed timing) are left out.
struct LogCurve {
  std::vector<double> x;      // the series' x, in its unit (footprint bytes for latency)
  std::vector<double> log_y;  // ln(y) of each point's median
  std::vector<double> sigma;  // noise of log_y, >= min_relative_noise (a relative noise)
};

// Each point's sigma is the largest of:
//  - the MAD-sigma of the log of its own samples (robust to a slow sample),
//  - the MAD-sigma of neighbour-to-neighbour differences of log_y over the whole
//    curve, divided by sqrt(2): scatter *between* points (a new random chain,
//    new physical pages per footprint) that a point's own samples cannot see.
//    Steps are a minority of neighbour differences, so the MAD ignores them;
//  - min_relative_noise.
// The samples' sigma, not the standard error of their median, is used on
// purpose: between-point scatter does not shrink with more samples per point.
LogCurve log_curve(const Series& series, double min_relative_noise = k_min_relative_noise);

// One constant piece: points first..last inclusive.
struct Segment {
  size_t first = 0;
  size_t last = 0;
  double level = 0;  // inverse-variance weighted mean of the values
  double chi2 = 0;   // sum of squared standardized residuals about `level`
  size_t size() const { return last - first + 1; }
};

// Penalty per segment for n points with known noise, BIC-like. Plain BIC
// charges ln(n) per parameter against chi2 (= -2 log likelihood + const), and
// a segment adds two (its level and its change point): 2 ln n. But a change
// point is picked as the best of ~n positions, which makes plain BIC liberal:
// on pure noise it splits 13% of 20-point and 8% of 60-point runs. The modified
// BIC of Zhang & Siegmund (2007), the default of the R changepoint package
// ("MBIC"), charges 3 ln n, which brings that under 1% at n = 60, while a
// step of 2.5 sigma between two 5-point plateaus of a 60-point sweep is still
// found. The penalty grows with n,
// so a longer sweep needs stronger evidence per step; a lone point splits off
// only beyond sqrt(6 ln n) sigma (about 5 sigma at n = 60).
double change_point_penalty(size_t n);

// Exact minimiser of  sum over segments (chi2 of the segment) + penalty * segments
// by dynamic programming over the last change point, O(n^2) time, O(n) memory.
// values and sigmas must have the same size; sigmas must be > 0.
// Returns the segments in order, covering every index; empty for empty input.
std::vector<Segment> segment_piecewise_constant(std::span<const double> values,
                                                std::span<const double> sigmas, double penalty_per_segment);

}  // namespace gpuscope::analysis
