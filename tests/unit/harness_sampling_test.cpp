// The harness against made-up launches: no device needed.
#include "core/random.hpp"
#include "core/stats.hpp"
#include "harness/harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gpuscope {
namespace {

TEST(Stats, MedianQuantileMad) {
  const std::vector<double> xs = {5, 1, 3, 2, 4};
  EXPECT_DOUBLE_EQ(median(xs), 3);
  EXPECT_DOUBLE_EQ(quantile(xs, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile(xs, 1.0), 5);
  EXPECT_NEAR(mad_sigma(xs), 1.4826, 1e-9);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{}), 0);
}

TEST(Stats, SummaryCountsOutliersWithoutDroppingThem) {
  const std::vector<double> xs = {10, 10.1, 9.9, 10.05, 9.95, 50};
  const auto s = summarize(xs);
  EXPECT_EQ(s.n, 6);
  EXPECT_EQ(s.outliers, 1);
  EXPECT_DOUBLE_EQ(s.max, 50);
  EXPECT_NEAR(s.median, 10.025, 1e-9);
}

TEST(Random, BelowIsInRangeAndCoversIt) {
  SplitMix64 rng(42);
  std::vector<int> hits(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const auto v = rng.below(7);
    ASSERT_LT(v, 7u);
    ++hits[v];
  }
  for (int h : hits) EXPECT_GT(h, 800);
}

// A device whose launches cost `ns_per_unit` per unit of work plus a fixed
// overhead; records every launch it was asked for.
struct FakeDevice {
  double ns_per_unit = 1000;
  double overhead_ns = 5000;
  std::vector<uint64_t> launches;
  double operator()(uint64_t work) {
    launches.push_back(work);
    return overhead_ns + ns_per_unit * static_cast<double>(work);
  }
};

TEST(Harness, CalibrationLandsNearTarget) {
  FakeDevice dev;
  HarnessConfig cfg;
  cfg.target_launch_ms = 10;
  const uint64_t work = calibrate(std::ref(dev), 1, UINT32_MAX, cfg);
  const double ms = (dev.overhead_ns + dev.ns_per_unit * static_cast<double>(work)) / 1e6;
  EXPECT_GT(ms, 5);
  EXPECT_LT(ms, 20);
}

TEST(Harness, CalibrationNeverPlansPastCeiling) {
  // A target above the ceiling (a user's --max-launch-ms below the default
  // target): every launch the harness plans stays under the ceiling.
  FakeDevice dev;
  HarnessConfig cfg;
  cfg.target_launch_ms = 100;
  cfg.max_launch_ms = 20;
  measure(std::ref(dev), 1, UINT32_MAX, cfg);
  for (auto w : dev.launches)
    EXPECT_LE((dev.overhead_ns + dev.ns_per_unit * static_cast<double>(w)) / 1e6, 20.0);
}

TEST(Harness, GrowthPerStepIsBounded) {
  // Cost per unit jumps 100x past 1000 units (spilling out of a cache): the
  // harness cannot foresee that, so it grows the work at most 16x a step,
  // bounding how far one launch can overshoot.
  std::vector<uint64_t> works;
  auto run = [&](uint64_t w) {
    works.push_back(w);
    return static_cast<double>(w) * (w > 1000 ? 100000.0 : 1000.0);
  };
  HarnessConfig cfg;
  measure(run, 1, UINT32_MAX, cfg);
  for (size_t i = 1; i < works.size(); ++i) EXPECT_LE(works[i], 16 * works[i - 1]) << i;
  EXPECT_LE(static_cast<double>(works.back()) * 100000.0 / 1e6, cfg.max_launch_ms);
}

TEST(Harness, RespectsMaxWork) {
  FakeDevice dev;
  HarnessConfig cfg;
  const auto m = measure(std::ref(dev), 1, 100, cfg);
  EXPECT_EQ(m.work_per_launch, 100u);
  for (auto w : dev.launches) EXPECT_LE(w, 100u);
}

TEST(Harness, KeepsEverySampleAndTakesMoreWhenNoisy) {
  SplitMix64 rng(7);
  auto noisy = [&](uint64_t w) {
    const double jitter = 1.0 + 0.2 * (static_cast<double>(rng.below(1000)) / 1000.0 - 0.5);
    return 1000.0 * static_cast<double>(w) * jitter;
  };
  HarnessConfig cfg;
  cfg.min_samples = 5;
  cfg.max_samples = 11;
  const auto m = measure(noisy, 1000, UINT32_MAX, cfg);
  EXPECT_EQ(m.ns_per_unit.size(), 11u);  // 10% jitter never settles under 3%
  EXPECT_EQ(m.summary.n, 11);
  EXPECT_NEAR(m.summary.median, 1000, 100);

  FakeDevice quiet;
  const auto q = measure(std::ref(quiet), 1000, UINT32_MAX, cfg);
  EXPECT_EQ(q.ns_per_unit.size(), 5u);
}

TEST(Harness, OutlierIsKeptAndDoesNotMoveTheMedian) {
  int call = 0;
  auto run = [&](uint64_t w) {
    ++call;
    return (call == 8 ? 50.0 : 1.0) * 1000.0 * static_cast<double>(w);  // one slow launch
  };
  HarnessConfig cfg;
  cfg.min_samples = 7;
  const auto m = measure(run, 10000, UINT32_MAX, cfg);
  EXPECT_EQ(m.summary.outliers, 1);
  EXPECT_NEAR(m.summary.median, 1000, 1);
  EXPECT_NEAR(*std::max_element(m.ns_per_unit.begin(), m.ns_per_unit.end()), 50000, 1);
}

TEST(Harness, BudgetCountsDown) {
  TimeBudget b(1000);
  EXPECT_FALSE(b.exhausted());
  EXPECT_LE(b.remaining_s(), 1000);
  TimeBudget spent(0);
  EXPECT_TRUE(spent.exhausted());
}

}  // namespace
}  // namespace gpuscope
