#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gpuscope {

double quantile(std::span<const double> xs, double q) {
  if (xs.empty()) return 0.0;
  std::vector<double> v(xs.begin(), xs.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  // The two order statistics the interpolation reads, without sorting the
  // rest: the lo-th in place, the next the least of those above it.
  const auto at_lo = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin(), at_lo, v.end());
  const double low = *at_lo;
  const double high = lo + 1 < v.size() ? *std::min_element(at_lo + 1, v.end()) : low;
  return low + (high - low) * frac;
}

double median(std::span<const double> xs) { return quantile(xs, 0.5); }

double mad_sigma(std::span<const double> xs) {
  if (xs.size() < 2) return 0.0;
  const double m = median(xs);
  std::vector<double> dev;
  dev.reserve(xs.size());
  for (double x : xs) dev.push_back(std::abs(x - m));
  return 1.4826 * median(dev);
}

SampleSummary summarize(std::span<const double> xs) {
  SampleSummary s;
  if (xs.empty()) return s;
  s.n = static_cast<int>(xs.size());
  s.median = median(xs);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  s.q1 = quantile(xs, 0.25);
  s.q3 = quantile(xs, 0.75);
  s.mad_sigma = mad_sigma(xs);
  s.rel_spread = s.median != 0 ? s.mad_sigma / std::abs(s.median) : 0.0;
  // When most samples agree exactly the MAD is 0; a floor of 0.1% of the
  // median keeps one wild sample among identical ones an outlier.
  const double scale = std::max(s.mad_sigma, 1e-3 * std::abs(s.median));
  for (double x : xs) s.outliers += std::abs(x - s.median) > 3.5 * scale ? 1 : 0;
  return s;
}

}  // namespace gpuscope
