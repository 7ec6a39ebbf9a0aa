#include "analysis/segmentation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace gpuscope::analysis {
namespace {

std::vector<double> constant_sigmas(size_t n, double sigma) { return std::vector<double>(n, sigma); }

// Levels with Gaussian noise of `sigma`, fixed seed.
std::vector<double> staircase(const std::vector<std::pair<size_t, double>>& runs, double sigma,
                              unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<double> v;
  for (const auto& [count, level] : runs) {
    for (size_t i = 0; i < count; ++i) v.push_back(level + noise(rng));
  }
  return v;
}

// Cost of a segmentation as the DP defines it, for the brute-force check.
double total_cost(const std::vector<double>& v, const std::vector<double>& s,
                  const std::vector<Segment>& segments, double penalty) {
  double cost = 0;
  for (const Segment& seg : segments) {
    double w = 0, wv = 0;
    for (size_t i = seg.first; i <= seg.last; ++i) {
      w += 1 / (s[i] * s[i]);
      wv += v[i] / (s[i] * s[i]);
    }
    const double level = wv / w;
    for (size_t i = seg.first; i <= seg.last; ++i) cost += std::pow((v[i] - level) / s[i], 2);
    cost += penalty;
  }
  return cost;
}

TEST(Segmentation, EmptyInputGivesNoSegments) {
  EXPECT_TRUE(segment_piecewise_constant({}, {}, 5.0).empty());
}

TEST(Segmentation, MismatchedSizesThrow) {
  const std::vector<double> v{1, 2, 3}, s{1, 1};
  EXPECT_THROW(segment_piecewise_constant(v, s, 1.0), std::invalid_argument);
}

TEST(Segmentation, CleanStepsAreFoundExactly) {
  const std::vector<double> v = staircase({{8, 1.0}, {6, 2.0}, {10, 2.5}}, 0.0, 1);
  const auto s = constant_sigmas(v.size(), 0.015);
  const auto segments = segment_piecewise_constant(v, s, change_point_penalty(v.size()));
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].first, 0u);
  EXPECT_EQ(segments[0].last, 7u);
  EXPECT_EQ(segments[1].first, 8u);
  EXPECT_EQ(segments[1].last, 13u);
  EXPECT_EQ(segments[2].last, 23u);
  EXPECT_NEAR(segments[1].level, 2.0, 1e-12);
  EXPECT_NEAR(segments[2].chi2, 0.0, 1e-9);
}

TEST(Segmentation, NoiseAloneIsRarelySplit) {
  // Plain BIC (2 ln n) splits ~8% of these; the change-point penalty under 1%.
  int split = 0;
  for (unsigned seed = 1; seed <= 300; ++seed) {
    const std::vector<double> v = staircase({{60, 3.0}}, 0.05, seed);
    split += segment_piecewise_constant(v, constant_sigmas(v.size(), 0.05), change_point_penalty(v.size()))
                 .size() > 1;
  }
  EXPECT_LE(split, 6);
}

TEST(Segmentation, NoisyStepsAreFoundWithinAPoint) {
  // Steps of 6 sigma between runs of 10 points.
  const std::vector<double> v = staircase({{10, 0.0}, {10, 0.3}, {10, 0.6}}, 0.05, 7);
  const auto segments =
      segment_piecewise_constant(v, constant_sigmas(v.size(), 0.05), change_point_penalty(v.size()));
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_NEAR(static_cast<double>(segments[1].first), 10.0, 1.0);
  EXPECT_NEAR(static_cast<double>(segments[2].first), 20.0, 1.0);
}

TEST(Segmentation, PenaltyTradesFitAgainstSegments) {
  const std::vector<double> v = staircase({{5, 0.0}, {5, 1.0}}, 0.1, 3);
  const auto s = constant_sigmas(v.size(), 0.1);
  EXPECT_EQ(segment_piecewise_constant(v, s, 0.0).size(), v.size());  // free segments: each point its own
  EXPECT_EQ(segment_piecewise_constant(v, s, 1e9).size(), 1u);        // costly segments: one for all
  EXPECT_EQ(segment_piecewise_constant(v, s, change_point_penalty(v.size())).size(), 2u);
}

TEST(Segmentation, LoneOutlierSplitsOnlyBeyondThePenalty) {
  // At n = 41 a lone point needs about sqrt(6 ln 41) = 4.7 sigma to stand alone.
  std::vector<double> v(41, 0.0);
  const auto s = constant_sigmas(v.size(), 1.0);
  v[20] = 4.3;
  EXPECT_EQ(segment_piecewise_constant(v, s, change_point_penalty(v.size())).size(), 1u);
  v[20] = 5.1;
  EXPECT_EQ(segment_piecewise_constant(v, s, change_point_penalty(v.size())).size(), 3u);
}

TEST(Segmentation, MatchesBruteForceOptimum) {
  // Every partition of 11 points (2^10 of them) against the DP's answer.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> level(0.0, 1.0), sigma(0.05, 0.3);
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> v, s;
    for (int i = 0; i < 11; ++i) {
      v.push_back(level(rng) + (i > 5 ? 1.0 : 0.0));
      s.push_back(sigma(rng));
    }
    const double penalty = change_point_penalty(v.size());
    double best = std::numeric_limits<double>::infinity();
    for (unsigned cuts = 0; cuts < (1u << 10); ++cuts) {
      std::vector<Segment> segments;
      size_t first = 0;
      for (size_t i = 0; i < 10; ++i) {
        if (cuts & (1u << i)) {
          segments.push_back({first, i, 0, 0});
          first = i + 1;
        }
      }
      segments.push_back({first, 10, 0, 0});
      best = std::min(best, total_cost(v, s, segments, penalty));
    }
    const auto found = segment_piecewise_constant(v, s, penalty);
    EXPECT_NEAR(total_cost(v, s, found, penalty), best, 1e-9) << "trial " << trial;
  }
}

TEST(Segmentation, ChangePointPenaltyIsThreeLnN) {
  EXPECT_DOUBLE_EQ(change_point_penalty(100), 3 * std::log(100.0));
  EXPECT_DOUBLE_EQ(change_point_penalty(1), 0.0);
}

TEST(LogCurve, UsesSampleMadFlooredAtMinimumNoise) {
  Series series;
  series.points = {
      {1024, 10.0, {10.0, 10.0, 10.0, 10.0, 10.0}},  // perfectly clean: the floor
      {2048, 10.0, {8.0, 9.0, 10.0, 11.0, 12.5}},    // noisy: its own MAD
      {4096, 10.0, {}},                              // no samples: the floor
  };
  const LogCurve c = log_curve(series);
  ASSERT_EQ(c.x.size(), 3u);
  EXPECT_DOUBLE_EQ(c.log_y[0], std::log(10.0));
  EXPECT_DOUBLE_EQ(c.sigma[0], k_min_relative_noise);
  EXPECT_DOUBLE_EQ(c.sigma[2], k_min_relative_noise);
  // log samples around ln 10: deviations |ln(9/10)| and |ln(11/10)| bracket the median deviation.
  EXPECT_GT(c.sigma[1], 1.4826 * std::log(1.1) * 0.9);
  EXPECT_LT(c.sigma[1], 1.4826 * std::log(10.0 / 9.0) * 1.1);
}

TEST(LogCurve, ScatterBetweenPointsRaisesEveryPointsNoise) {
  // Each point's samples agree exactly, but the points scatter by ~10%.
  Series series;
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, 0.1);
  for (int i = 0; i < 40; ++i) {
    const double y = 50.0 * std::exp(noise(rng));
    series.points.push_back({1024.0 * (i + 1), y, {y, y, y}});
  }
  const LogCurve c = log_curve(series);
  for (double s : c.sigma) {
    EXPECT_GT(s, 0.06);
    EXPECT_LT(s, 0.16);
  }
}

TEST(LogCurve, DropsPointsWithoutAPositiveMedian) {
  Series series;
  series.points = {{1024, 0.0, {0.0}}, {2048, -1.0, {}}, {4096, 5.0, {5.0}}};
  const LogCurve c = log_curve(series);
  ASSERT_EQ(c.x.size(), 1u);
  EXPECT_EQ(c.x[0], 4096);
  EXPECT_TRUE(log_curve(Series{}).x.empty());
}

}  // namespace
}  // namespace gpuscope::analysis
