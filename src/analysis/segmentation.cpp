#include "analysis/segmentation.hpp"

#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuscope::analysis {

LogCurve log_curve(const Series& series, double min_relative_noise) {
  LogCurve curve;
  std::vector<double> own_sigma;
  for (const Point& p : series.points) {
    if (!(p.y > 0) || !std::isfinite(p.y)) continue;
    std::vector<double> log_samples;
    log_samples.reserve(p.samples.size());
    for (double s : p.samples) {
      if (s > 0 && std::isfinite(s)) log_samples.push_back(std::log(s));
    }
    curve.x.push_back(p.x);
    curve.log_y.push_back(std::log(p.y));
    own_sigma.push_back(mad_sigma(log_samples));
  }

  double between_sigma = 0;
  if (curve.log_y.size() >= 3) {
    std::vector<double> diffs;
    for (size_t i = 1; i < curve.log_y.size(); ++i) diffs.push_back(curve.log_y[i] - curve.log_y[i - 1]);
    between_sigma = mad_sigma(diffs) / std::sqrt(2.0);
  }

  curve.sigma.reserve(own_sigma.size());
  for (double s : own_sigma) curve.sigma.push_back(std::max({s, between_sigma, min_relative_noise}));
  return curve;
}

double change_point_penalty(size_t n) { return n < 2 ? 0.0 : 3.0 * std::log(static_cast<double>(n)); }

std::vector<Segment> segment_piecewise_constant(std::span<const double> values,
                                                std::span<const double> sigmas, double penalty_per_segment) {
  if (values.size() != sigmas.size())
    throw std::invalid_argument("segmentation: values and sigmas differ in size");
  const size_t n = values.size();
  if (n == 0) return {};

  // Prefix sums of w, w*v, w*v^2 (w = 1/sigma^2) give any segment's weighted
  // mean and chi2 in O(1). Values are logs of latencies (|v| < ~30), so the
  // subtraction in chi2 loses no meaningful precision.
  std::vector<double> sw(n + 1, 0), swv(n + 1, 0), swvv(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const double w = 1.0 / (sigmas[i] * sigmas[i]);
    sw[i + 1] = sw[i] + w;
    swv[i + 1] = swv[i] + w * values[i];
    swvv[i + 1] = swvv[i] + w * values[i] * values[i];
  }
  // Segment [begin, end) in half-open indices.
  const auto level = [&](size_t begin, size_t end) {
    return (swv[end] - swv[begin]) / (sw[end] - sw[begin]);
  };
  const auto chi2 = [&](size_t begin, size_t end) {
    const double w = sw[end] - sw[begin];
    const double wv = swv[end] - swv[begin];
    return std::max(0.0, (swvv[end] - swvv[begin]) - wv * wv / w);
  };

  // best[j]: minimal cost of the first j points; start[j]: where its last segment begins.
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<size_t> start(n + 1, 0);
  best[0] = 0;
  for (size_t end = 1; end <= n; ++end) {
    for (size_t begin = 0; begin < end; ++begin) {
      const double cost = best[begin] + chi2(begin, end) + penalty_per_segment;
      if (cost < best[end]) {
        best[end] = cost;
        start[end] = begin;
      }
    }
  }

  std::vector<Segment> segments;
  for (size_t end = n; end > 0; end = start[end]) {
    const size_t begin = start[end];
    segments.push_back({begin, end - 1, level(begin, end), chi2(begin, end)});
  }
  std::reverse(segments.begin(), segments.end());
  return segments;
}

}  // namespace gpuscope::analysis
