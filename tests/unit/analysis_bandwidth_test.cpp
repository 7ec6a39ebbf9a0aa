// The bandwidth, work-group and local-memory analysis (analysis/bandwidth)
// on synthetic series; tests/recorded/bandwidth_local_test.cpp runs it on
// recorded curves.
#include "analysis/analyze.hpp"
#include "analysis/bandwidth.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope {
namespace {

constexpr double KiB = 1024.0;
constexpr double MiB = 1024.0 * KiB;
constexpr double GiB = 1024.0 * MiB;

Series curve(const std::string& id, const std::vector<std::pair<double, double>>& xy) {
  Series s;
  s.id = id;
  s.probe = "test";
  for (auto [x, y] : xy) s.points.push_back(Point{x, y, {y * 0.995, y, y * 1.005}});
  return s;
}

// A staircase: 30 GB/s to 192 KiB, 10 to 24 MiB, 4 beyond 256 MiB, with
// smeared transitions between, two points per octave from 16 KiB to 4 GiB.
Series staircase(const std::string& id, double l1, double l2, double dram) {
  std::vector<std::pair<double, double>> xy;
  for (double x = 16 * KiB; x <= 4 * GiB * 1.0001; x *= std::sqrt(2.0)) {
    double y = dram;
    if (x <= 192 * KiB)
      y = l1;
    else if (x <= 1 * MiB)
      y = std::sqrt(l1 * l2);  // partial hits past L1
    else if (x <= 24 * MiB)
      y = l2;
    else if (x <= 256 * MiB)
      y = std::sqrt(l2 * dram);
    y *= 1 + 0.004 * std::sin(x);  // a little jitter
    xy.emplace_back(std::round(x), y);
  }
  return curve(id, xy);
}

analysis::Hierarchy two_levels() {
  analysis::Hierarchy h;
  analysis::CacheLevel l1, l2, dram;
  l1.capacity_bytes = 256 * KiB;
  l2.capacity_bytes = 32 * MiB;
  h.levels = {l1, l2};
  h.dram = dram;
  return h;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(BandwidthAnalysis, PlateausMatchTheLatencyLevels) {
  const Series read = staircase("bandwidth.read", 30000, 10000, 4000);
  const Series write = staircase("bandwidth.write", 3000, 4500, 3500);
  const Series copy = staircase("bandwidth.copy", 5000, 8000, 3300);
  const auto h = two_levels();
  const auto fs = analysis::bandwidth_findings(&read, &write, &copy, &h, "latency.global");
  ASSERT_NE(find(fs, "memory.L1.bandwidth_gbps"), nullptr);
  ASSERT_NE(find(fs, "memory.L2.bandwidth_gbps"), nullptr);
  ASSERT_NE(find(fs, "memory.dram.bandwidth_gbps"), nullptr);
  EXPECT_NEAR(number(*find(fs, "memory.L1.bandwidth_gbps")), 30000, 300);
  // The smeared stretch past L1 (up to 4x its capacity) is not L2's bandwidth.
  EXPECT_NEAR(number(*find(fs, "memory.L2.bandwidth_gbps")), 10000, 100);
  EXPECT_NEAR(number(*find(fs, "memory.dram.bandwidth_gbps")), 4000, 40);
  EXPECT_NEAR(number(*find(fs, "memory.dram.write_gbps")), 3500, 35);
  EXPECT_NEAR(number(*find(fs, "memory.dram.copy_gbps")), 3300, 33);
  const Finding& l2 = *find(fs, "memory.L2.bandwidth_gbps");
  EXPECT_EQ(l2.evidence, (std::vector<std::string>{"bandwidth.read", "latency.global"}));
  EXPECT_LE(*l2.low, number(l2));
  EXPECT_GE(*l2.high, number(l2));
  EXPECT_GT(l2.confidence, 0.5);
}

TEST(BandwidthAnalysis, WithoutLatencySegmentsTheCurveOnItsOwn) {
  const Series read = staircase("bandwidth.read", 30000, 10000, 4000);
  const auto fs = analysis::bandwidth_findings(&read, nullptr, nullptr, nullptr, "");
  ASSERT_NE(find(fs, "memory.L1.bandwidth_gbps"), nullptr);
  ASSERT_NE(find(fs, "memory.dram.bandwidth_gbps"), nullptr);
  EXPECT_NEAR(number(*find(fs, "memory.L1.bandwidth_gbps")), 30000, 300);
  EXPECT_NEAR(number(*find(fs, "memory.dram.bandwidth_gbps")), 4000, 40);
  EXPECT_NE(find(fs, "memory.dram.bandwidth_gbps")->method.find("on its own"), std::string::npos);
}

TEST(BandwidthAnalysis, ASweepThatStopsInACacheHasNoDram) {
  Series read = staircase("bandwidth.read", 30000, 10000, 4000);
  while (read.points.back().x > 16 * MiB) read.points.pop_back();
  const auto fs = analysis::bandwidth_findings(&read, nullptr, nullptr, nullptr, "");
  EXPECT_EQ(find(fs, "memory.dram.bandwidth_gbps"), nullptr);
  EXPECT_NE(find(fs, "memory.L1.bandwidth_gbps"), nullptr);
}

TEST(BandwidthAnalysis, EmptyOrMissingCurvesGiveNothing) {
  Series empty;
  EXPECT_TRUE(analysis::bandwidth_findings(nullptr, nullptr, nullptr, nullptr, "").empty());
  EXPECT_TRUE(analysis::bandwidth_findings(&empty, nullptr, nullptr, nullptr, "").empty());
  EXPECT_TRUE(analysis::workgroup_findings(empty).empty());
  EXPECT_TRUE(analysis::local_findings(nullptr, nullptr, nullptr, nullptr, nullptr).empty());
}

// A layout series as the probe writes it: one footprint, x = bytes per
// work-item per step, a detail entry per point with its shape.
Series layout(const std::string& id, double footprint, const std::vector<std::pair<double, double>>& xy) {
  Series s = curve(id, xy);
  s.meta["footprint_bytes"] = footprint;
  s.meta["detail"] = nlohmann::json::array();
  for (auto [x, y] : xy)
    s.meta["detail"].push_back({{"x", x},
                                {"vec", x >= 64 ? 16 : 4},
                                {"unroll", x >= 64 ? 1 : x / 16},
                                {"local", 256},
                                {"groups", 1056}});
  return s;
}

// DRAM's rate is the best layout's: a grid-stride write faster than the
// cursor walk's plateau gives memory.dram.write_gbps, and the method names
// the layout, its shape, and what the others read.
TEST(BandwidthAnalysis, DramIsTheBestLayoutMeasuredThere) {
  const Series read = staircase("bandwidth.read", 30000, 10000, 4400);
  const Series write = staircase("bandwidth.write", 3000, 4500, 3600);
  const Series copy = staircase("bandwidth.copy", 5000, 8000, 3400);
  const Series sread =
      layout("bandwidth.stream.read", 4 * GiB, {{16, 4300}, {32, 4350}});  // slower: cursor stays
  const Series swrite = layout("bandwidth.stream.write", 4 * GiB, {{16, 4300}, {32, 4310}, {64, 1100}});
  const Series gwrite = layout("bandwidth.grid.write", 4 * GiB, {{8, 3400}, {16, 4690}});
  const Series scopy = layout("bandwidth.stream.copy", 8 * GiB, {{16, 3950}});
  const auto h = two_levels();
  const auto fs = analysis::bandwidth_findings(&read, &write, &copy, &h, "latency.global",
                                               {&sread, &swrite, &gwrite, &scopy});

  const Finding* w = find(fs, "memory.dram.write_gbps");
  ASSERT_NE(w, nullptr);
  EXPECT_NEAR(number(*w), 4690, 1);
  ASSERT_TRUE(w->low && w->high);
  EXPECT_NEAR(*w->low, 4690 * 0.995, 1);
  EXPECT_NEAR(*w->high, 4690 * 1.005, 1);
  EXPECT_EQ(w->evidence,
            (std::vector<std::string>{"bandwidth.grid.write", "bandwidth.write", "latency.global"}));
  EXPECT_NE(w->method.find("whole-grid"), std::string::npos) << w->method;
  EXPECT_NE(w->method.find("uint4, one per work-item"), std::string::npos) << w->method;
  // The cursor plateau (3600 GB/s with 0.4% jitter) is quoted beside it.
  EXPECT_TRUE(w->method.find("per-group cursor walk 35") != std::string::npos ||
              w->method.find("per-group cursor walk 36") != std::string::npos)
      << w->method;
  EXPECT_NE(w->method.find("grid-stride (STREAM) layout best 4310"), std::string::npos) << w->method;

  const Finding* c = find(fs, "memory.dram.copy_gbps");
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(number(*c), 3950, 1);
  EXPECT_EQ(c->evidence.front(), "bandwidth.stream.copy");
  EXPECT_NE(c->method.find("uint4 x 1 per work-item per step, 1056 groups of 256"), std::string::npos)
      << c->method;

  // The cursor walk reads faster than the stream here: its plateau stays,
  // and its method says what the stream read.
  const Finding* r = find(fs, "memory.dram.bandwidth_gbps");
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(number(*r), 4400, 40);
  EXPECT_EQ(r->evidence.front(), "bandwidth.read");
  EXPECT_NE(r->method.find("grid-stride (STREAM) layout best 4350"), std::string::npos) << r->method;
  EXPECT_NE(r->method.find("cursor walk's plateau is the best"), std::string::npos) << r->method;

  // Cache levels are the cursor curves' alone.
  EXPECT_NEAR(number(*find(fs, "memory.L2.bandwidth_gbps")), 10000, 100);
}

// A layout measured at a footprint a cache still serves says nothing of
// DRAM, and without a DRAM window there is no DRAM finding to improve.
TEST(BandwidthAnalysis, LayoutsOutsideTheDramWindowAreIgnored) {
  const Series read = staircase("bandwidth.read", 30000, 10000, 4000);
  const Series write = staircase("bandwidth.write", 3000, 4500, 3500);
  const Series cached = layout("bandwidth.grid.write", 16 * MiB, {{16, 9000}});
  const auto h = two_levels();
  const auto fs = analysis::bandwidth_findings(&read, &write, nullptr, &h, "latency.global", {&cached});
  ASSERT_NE(find(fs, "memory.dram.write_gbps"), nullptr);
  EXPECT_NEAR(number(*find(fs, "memory.dram.write_gbps")), 3500, 40);
  EXPECT_EQ(find(fs, "memory.dram.write_gbps")->evidence.front(), "bandwidth.write");

  // A write layout with no cursor write curve still gives DRAM's write rate
  // when its footprint is in the window.
  const Series big = layout("bandwidth.stream.write", 4 * GiB, {{16, 4300}});
  const auto only = analysis::bandwidth_findings(&read, nullptr, nullptr, &h, "latency.global", {&big});
  ASSERT_NE(find(only, "memory.dram.write_gbps"), nullptr);
  EXPECT_NEAR(number(*find(only, "memory.dram.write_gbps")), 4300, 1);

  Series short_read = staircase("bandwidth.read", 30000, 10000, 4000);
  short_read.points.resize(12);  // stops inside L2: no DRAM window
  const auto none = analysis::bandwidth_findings(&short_read, nullptr, nullptr, nullptr, "", {&big});
  EXPECT_EQ(find(none, "memory.dram.write_gbps"), nullptr);
}

// Work dealt to P units: time goes as ceil(W / P) rounds.
Series sawtooth(long period, long max_groups, bool quantized) {
  std::vector<std::pair<double, double>> xy;
  for (long w = 1; w <= max_groups; ++w) {
    const double rounds = quantized ? std::ceil(static_cast<double>(w) / period) : 1.0 + w / 1000.0;
    xy.emplace_back(w, 100.0 * w / rounds);
  }
  Series s = curve("bandwidth.workgroups", xy);
  s.meta["compute_units"] = period;
  return s;
}

TEST(WorkgroupAnalysis, FindsThePeriodOfTheSawtooth) {
  const auto fs = analysis::workgroup_findings(sawtooth(6, 25, true));
  const Finding* p = find(fs, "memory.bandwidth.workgroup_period");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(number(*p), 6);
  EXPECT_GT(p->confidence, 0.8);
  EXPECT_NE(p->note.find("equals"), std::string::npos);
  const Finding* sat = find(fs, "memory.bandwidth.saturating_workgroups");
  ASSERT_NE(sat, nullptr);
  EXPECT_EQ(number(*sat), 6);  // 6 groups reach the best rate; 5 are 83% of it
}

TEST(WorkgroupAnalysis, SmoothScalingHasNoPeriod) {
  const auto fs = analysis::workgroup_findings(sawtooth(6, 25, false));
  EXPECT_EQ(find(fs, "memory.bandwidth.workgroup_period"), nullptr);
}

TEST(WorkgroupAnalysis, OneNoisyDipIsNotAPeriod) {
  Series s = sawtooth(6, 25, false);
  s.points[9].y *= 0.7;  // 10 groups read low once
  EXPECT_EQ(find(analysis::workgroup_findings(s), "memory.bandwidth.workgroup_period"), nullptr);
}

Series one_point(const std::string& id, double x, double y) { return curve(id, {{x, y}}); }

TEST(LocalAnalysis, FasterThanTheCachedGlobalPathIsOnChip) {
  const Series lat = one_point("local.latency", 4096, 14);
  const Series glat = one_point("local.global_latency", 4096, 21);
  const Series bw = curve("local.bandwidth", {{4, 33000}, {8, 33100}, {16, 32900}});
  const Series gbw = curve("local.global_bandwidth", {{4, 32000}, {8, 33000}, {16, 33000}});
  Series cap = curve("local.capacity", {{1024, 1}, {47104, 1}, {48128, 1}, {49152, 0}});
  cap.meta["reported_bytes"] = 49152;
  const auto fs = analysis::local_findings(&lat, &glat, &bw, &gbw, &cap);
  ASSERT_NE(find(fs, "local.latency_ns"), nullptr);
  EXPECT_NEAR(number(*find(fs, "local.latency_ns")), 14, 0.1);
  EXPECT_NEAR(number(*find(fs, "local.bandwidth_gbps")), 33100, 1);
  EXPECT_EQ(number(*find(fs, "local.capacity_bytes")), 48128);
  EXPECT_EQ(*find(fs, "local.capacity_bytes")->high, 49152);
  const Finding* on_chip = find(fs, "local.on_chip");
  ASSERT_NE(on_chip, nullptr);
  EXPECT_TRUE(std::get<bool>(on_chip->value));
  EXPECT_GT(on_chip->confidence, 0.7);
}

TEST(LocalAnalysis, NoFasterThanGlobalIsNotOnChip) {
  // Mali Bifrost (the Mali-G52 article): local memory as fast as global memory in the L1.
  const Series lat = one_point("local.latency", 4096, 60);
  const Series glat = one_point("local.global_latency", 4096, 58);
  const Series bw = curve("local.bandwidth", {{4, 10}, {16, 20}});
  const Series gbw = curve("local.global_bandwidth", {{4, 10}, {16, 21}});
  const auto fs = analysis::local_findings(&lat, &glat, &bw, &gbw, nullptr);
  const Finding* on_chip = find(fs, "local.on_chip");
  ASSERT_NE(on_chip, nullptr);
  EXPECT_FALSE(std::get<bool>(on_chip->value));
  EXPECT_EQ(find(fs, "local.capacity_bytes"), nullptr);
}

TEST(LocalAnalysis, WiderLocalReadsAtTheSameLatencyAreNotOnChip) {
  // Mali-G52 as the Mali-G52 article measured it: local float4 reads at 32 B/clk against
  // 16 for buffers, but the latency of the load/store cache.
  const Series lat = one_point("local.latency", 4096, 52.5);
  const Series glat = one_point("local.global_latency", 4096, 52);
  const Series bw = curve("local.bandwidth", {{4, 51}, {8, 51}, {16, 51}});
  const Series gbw = curve("local.global_bandwidth", {{4, 25.6}, {8, 25.6}, {16, 25.6}});
  const auto fs = analysis::local_findings(&lat, &glat, &bw, &gbw, nullptr);
  const Finding* on_chip = find(fs, "local.on_chip");
  ASSERT_NE(on_chip, nullptr);
  EXPECT_FALSE(std::get<bool>(on_chip->value)) << on_chip->note;
}

}  // namespace
}  // namespace gpuscope
