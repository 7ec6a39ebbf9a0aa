// Robust statistics as free functions over samples. Nothing is dropped:
// outliers are counted and reported, and medians make them harmless.
#pragma once

#include <span>
#include <vector>

namespace gpuscope {

double median(std::span<const double> xs);
// Linear-interpolated quantile, q in [0, 1].
double quantile(std::span<const double> xs, double q);
// Median absolute deviation scaled to estimate a normal sigma (x1.4826).
double mad_sigma(std::span<const double> xs);

struct SampleSummary {
  int n = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double q1 = 0;
  double q3 = 0;
  double mad_sigma = 0;
  double rel_spread = 0;  // mad_sigma / median
  int outliers = 0;       // samples > 3.5 sigma (MAD, floored at 0.1% of the median) off; kept, not dropped
};

SampleSummary summarize(std::span<const double> xs);

}  // namespace gpuscope
