// The sustain probe's analysis on made-up curves: a ramp, throttling, a
// clock that drops after idle gaps, and one that does none of these;
// tests/device/probes_sustain_test.cpp runs the probe on PoCL.
#include "analysis/application.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace gpuscope {
namespace {

Series curve(const std::string& id, double duration_s, double step_s,
             const std::function<double(double)>& y) {
  Series s;
  s.id = id;
  s.probe = "sustain";
  for (double t = step_s / 2; t < duration_s; t += step_s) s.points.push_back({t, y(t), {y(t)}});
  s.meta = {{"launch_ms_planned", step_s * 1e3}};
  return s;
}

Series gaps(const std::vector<double>& ys) {
  Series s;
  s.id = "sustain.gap.throughput";
  const double xs[] = {0, 1, 10, 100, 300};
  for (size_t i = 0; i < ys.size(); ++i) s.points.push_back({xs[i], ys[i], {ys[i]}});
  return s;
}

const Finding* get(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(SustainAnalysis, RampThrottlingAndIdleDrops) {
  Results r;
  // 25 ms launches; the clock ramps over 150 ms from 40%, holds 1980 MHz,
  // then from 20 s falls to 80% of it by 30 s.
  auto clock = [](double t) {
    if (t < 0.15) return 1980 * (0.4 + 0.6 * t / 0.15);
    if (t < 20) return 1980.0;
    return 1980 * std::max(0.8, 1 - 0.02 * (t - 20));
  };
  r.series = {curve("sustain.throughput", 60, 0.025, [&](double t) { return 30 * clock(t); }),
              curve("sustain.clock", 60, 0.025, clock), gaps({100, 100, 99, 70, 60})};
  const auto fs = analysis::sustain_findings(r);
  ASSERT_NE(get(fs, "sustain.ramp_ms"), nullptr);
  EXPECT_NEAR(number(*get(fs, "sustain.ramp_ms")), 150, 25);
  EXPECT_TRUE(std::get<bool>(get(fs, "sustain.throttling")->value));
  EXPECT_NEAR(number(*get(fs, "sustain.drop_fraction")), 0.2, 0.01);
  EXPECT_NEAR(number(*get(fs, "sustain.throttle_onset_s")), 25, 1);  // half the drop
  EXPECT_NEAR(number(*get(fs, "sustain.sustained_clock_mhz")), 1584, 10);
  EXPECT_TRUE(std::get<bool>(get(fs, "sustain.dvfs.clock_drops_between_launches")->value));
  EXPECT_DOUBLE_EQ(number(*get(fs, "sustain.dvfs.drop_after_gap_ms")), 100);
}

TEST(SustainAnalysis, SteadyClockNoThrottlingNoDrops) {
  Results r;
  r.series = {curve("sustain.throughput", 3, 0.025, [](double) { return 1000.0; }),
              gaps({100, 101, 99, 100, 98})};
  const auto fs = analysis::sustain_findings(r);
  EXPECT_FALSE(std::get<bool>(get(fs, "sustain.throttling")->value));
  EXPECT_EQ(get(fs, "sustain.throttle_onset_s"), nullptr);
  EXPECT_LE(number(*get(fs, "sustain.ramp_ms")), 25);
  EXPECT_EQ(get(fs, "sustain.sustained_clock_mhz"), nullptr);  // no counters, no driver clock
  EXPECT_FALSE(std::get<bool>(get(fs, "sustain.dvfs.clock_drops_between_launches")->value));
}

}  // namespace
}  // namespace gpuscope
