// The compute/oplatency analysis on made-up series: ratio rounding, dual
// issue, cycles, and the findings assembled from series.
#include "analysis/analyze.hpp"
#include "analysis/compute.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

using analysis::cycles_from_ns;
using analysis::detect_dual_issue;
using analysis::ops_per_clock_per_cu;
using analysis::round_rate_ratio;

TEST(RateRatio, RoundsToTheNearestPowerOfTwoInLog) {
  EXPECT_DOUBLE_EQ(round_rate_ratio(1.0).rounded, 1.0);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.49).rounded, 0.5);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.13).rounded, 0.125);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.0640).rounded, 0.0625);
  EXPECT_DOUBLE_EQ(round_rate_ratio(1.9).rounded, 2.0);
  // 0.7 is nearer 1/sqrt2 ~ 0.707 = the log midpoint of 1/2 and 1: just below it.
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.70).rounded, 0.5);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.72).rounded, 1.0);
  // Clamped to the candidates 1/64 .. 4.
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.001).rounded, 1.0 / 64);
  EXPECT_DOUBLE_EQ(round_rate_ratio(20).rounded, 4.0);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0.49).raw, 0.49);
  EXPECT_NEAR(round_rate_ratio(0.49).log2_error, std::abs(std::log2(0.98)), 1e-12);
  EXPECT_DOUBLE_EQ(round_rate_ratio(0).rounded, 0);  // no rate: no ratio
}

TEST(DualIssue, MixBeatingTheFasterOpAloneIsDualIssue) {
  // Bifrost-like: FMA and ADD each 48/clk alone, 96/clk mixed.
  const auto bifrost = detect_dual_issue(96, 48, 48);
  EXPECT_TRUE(bifrost.detected);
  EXPECT_DOUBLE_EQ(bifrost.gain, 2.0);
  // One shared pipe: the mix runs at the common rate (noise +-3%).
  EXPECT_FALSE(detect_dual_issue(103, 100, 100).detected);
  // Two rates, issued one after the other: harmonic mean, below the faster.
  EXPECT_FALSE(detect_dual_issue(1 / (0.5 / 128 + 0.5 / 64), 128, 64).detected);
  EXPECT_FALSE(detect_dual_issue(10, 0, 0).detected);
}

TEST(Cycles, NsTimesClock) {
  EXPECT_DOUBLE_EQ(cycles_from_ns(2.0, 1980), 3.96);
  EXPECT_DOUBLE_EQ(ops_per_clock_per_cu(33450, 132, 1980), 33450 * 1000.0 / (132 * 1980));
  EXPECT_DOUBLE_EQ(ops_per_clock_per_cu(1, 0, 1980), 0);
}

Series throughput(const std::string& id, std::vector<std::pair<double, double>> lanes_gops, double flop = 1) {
  Series s;
  s.id = id;
  s.probe = "compute";
  s.x = {"values_per_op", ""};
  s.y = {"throughput", "Gop/s"};
  for (auto [x, y] : lanes_gops) s.points.push_back({x, y, {y * 0.99, y, y * 1.01}});
  s.meta["flop_per_op"] = flop;
  return s;
}

Series latency(const std::string& id, double ns, std::vector<double> cycles = {}) {
  Series s;
  s.id = id;
  s.probe = "oplatency";
  s.x = {"chains", ""};
  s.y = {"latency", "ns"};
  s.points.push_back({1, ns, {ns, ns * 1.001, ns * 0.999}});
  if (!cycles.empty()) s.meta["cycles_per_op"] = cycles;
  return s;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

// A made-up Hopper: 132 SMs at 1980 MHz, fp32 FMA 128/clk/SM, fp64 64, SFU 16.
Results hopper_like() {
  Results r;
  r.device.compute_units = 132;
  r.device.clock_mhz = 1980;
  const double clk = 132 * 1.980;  // Gop/s per op/clk/SM
  r.series.push_back(throughput("compute.fp32.fma", {{1, 128 * clk}, {4, 126 * clk}}, 2));
  r.series.push_back(throughput("compute.fp32.add", {{1, 127 * clk}}));
  r.series.push_back(throughput("compute.fp64.fma", {{1, 64.5 * clk}}, 2));
  r.series.push_back(throughput("compute.fp32.native_sin", {{1, 15.8 * clk}}));
  r.series.push_back(throughput("compute.int32.add", {{1, 64 * clk}}));
  r.series.push_back(throughput("compute.fp32.mix_fma_add", {{1, 127.5 * clk}}));
  r.series.push_back(throughput("compute.fp32.mix_fma_iadd", {{1, 127 * clk}}));
  r.series.push_back(latency("oplatency.fp32.fma", 2.02, {4.0, 4.0, 4.01}));
  r.series.push_back(latency("oplatency.int32.add", 1.0));
  return r;
}

TEST(ComputeFindings, RatesRatiosAndPerClockFromSeries) {
  const auto fs = analysis::analyze_all(hopper_like());
  const double clk = 132 * 1.980;
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp32.fma.throughput_gops"), 128 * clk);  // best form, scalar
  EXPECT_NEAR(test::finding_value(fs, "compute.fp32.fma.ops_per_clock_per_cu"), 128, 1e-9);
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp32.fma.rate_vs_fp32_fma"), 1);
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp64.fma.rate_vs_fp32_fma"), 0.5);
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp32.native_sin.rate_vs_fp32_fma"), 0.125);
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.int32.add.rate_vs_fp32_fma"), 0.5);
  const Finding* sin = find(fs, "compute.fp32.native_sin.rate_vs_fp32_fma");
  ASSERT_NE(sin, nullptr);
  EXPECT_NE(sin->note.find("0.1234"), std::string::npos) << sin->note;  // raw kept
  EXPECT_NEAR(*sin->low, 15.8 / 128, 1e-12);
  // FMA counted as 2 FLOP in the note's T(FL)OP/s.
  const Finding* fma = find(fs, "compute.fp32.fma.throughput_gops");
  ASSERT_NE(fma, nullptr);
  EXPECT_NE(fma->note.find("66.91 T(FL)OP/s"), std::string::npos) << fma->note;
  // Mixes are not rates of their own. FMA+ADD share the FP32 pipes: the mix
  // (127.5) only matches the two issued one after the other. FMA+int ADD at
  // 127 against 128 and 64 alone beats their one-after-the-other rate (85.3)
  // by 1.49x: the int adds ran beside the FMAs, on a pipe of their own.
  EXPECT_EQ(find(fs, "compute.fp32.mix_fma_add.throughput_gops"), nullptr);
  EXPECT_FALSE(std::get<bool>(find(fs, "compute.dual_issue.fp32_fma_add")->value));
  EXPECT_TRUE(std::get<bool>(find(fs, "compute.dual_issue.fp32_fma_int32_add")->value));
}

TEST(ComputeFindings, DualIssueFoundWhereTheMixWins) {
  Results r = hopper_like();
  for (auto& s : r.series)
    if (s.id == "compute.fp32.mix_fma_add") {
      s.points[0].y *= 2;
      for (double& v : s.points[0].samples) v *= 2;
    }
  const auto fs = analysis::analyze_all(r);
  EXPECT_TRUE(std::get<bool>(find(fs, "compute.dual_issue.fp32_fma_add")->value));
}

// On a noisy device, a mix whose median beats the single ops but whose
// samples overlap theirs is not dual issue (seen on PoCL: medians 3.3 vs 2.5).
TEST(ComputeFindings, DualIssueNeedsTheSamplesToSeparate) {
  Results r = hopper_like();
  for (auto& s : r.series) {
    if (s.id == "compute.fp32.mix_fma_add") s.points[0].samples = {2.0, 3.3, 3.4, 1.5, 3.3};
    if (s.id == "compute.fp32.fma") s.points[0].samples = {2.5, 4.9, 2.4, 3.6, 2.5};
    if (s.id == "compute.fp32.add") s.points[0].samples = {2.1, 2.2, 4.0, 2.1, 2.0};
    if (s.id == "compute.fp32.mix_fma_add") s.points[0].y = 3.3;
    if (s.id == "compute.fp32.fma") s.points[0].y = 2.5;
    if (s.id == "compute.fp32.add") s.points[0].y = 2.1;
  }
  const auto fs = analysis::analyze_all(r);
  EXPECT_FALSE(std::get<bool>(find(fs, "compute.dual_issue.fp32_fma_add")->value));
}

TEST(ComputeFindings, LatencyCyclesFromCounterElseFromReportedClock) {
  const auto fs = analysis::analyze_all(hopper_like());
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp32.fma.latency_ns"), 2.02);
  EXPECT_DOUBLE_EQ(test::finding_value(fs, "compute.fp32.fma.latency_cycles"), 4.0);  // counter's median
  const Finding* counted = find(fs, "compute.fp32.fma.latency_cycles");
  EXPECT_NE(counted->method.find("cycle counter"), std::string::npos);
  EXPECT_NEAR(test::finding_value(fs, "compute.int32.add.latency_cycles"), 1.98, 1e-9);  // 1 ns x 1980 MHz
  const Finding* derived = find(fs, "compute.int32.add.latency_cycles");
  EXPECT_NE(derived->note.find("uncertain"), std::string::npos);
  EXPECT_LT(derived->confidence, counted->confidence);
}

TEST(ComputeFindings, NothingWithoutFp32FmaRatioOrClock) {
  Results r;
  r.series.push_back(throughput("compute.int32.add", {{1, 100}}));
  const auto fs = analysis::analyze_all(r);
  EXPECT_NE(find(fs, "compute.int32.add.throughput_gops"), nullptr);
  EXPECT_EQ(find(fs, "compute.int32.add.rate_vs_fp32_fma"), nullptr);
  EXPECT_EQ(find(fs, "compute.int32.add.ops_per_clock_per_cu"), nullptr);
}

}  // namespace
}  // namespace gpuscope
