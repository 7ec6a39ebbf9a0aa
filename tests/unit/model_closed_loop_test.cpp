// The closed loop's pure parts (model/model_builder.hpp, model/replay.hpp):
// findings to a description the sim's strict reader accepts, contradictions
// resolved and named, the series comparison and the one confidence rule.
#include "backends/sim/sim_config.hpp"
#include "model/model_builder.hpp"
#include "model/replay.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::model {
namespace {

using test::make_finding;
constexpr double KiB = 1024.0, MiB = 1024.0 * KiB;

Results small_gpu() {
  Results r;
  r.device.id = "test:0";
  r.device.name = "Test GPU";
  r.device.type = "gpu";
  r.device.compute_units = 4;
  r.device.clock_mhz = 1000;
  r.device.global_mem_bytes = uint64_t{4} << 30;
  r.device.max_alloc_bytes = uint64_t{1} << 30;
  r.device.max_work_group_size = 256;
  r.device.global_cache_line_bytes = 64;
  auto& f = r.findings;
  f.push_back(make_finding("device.measured_clock_mhz", 1000.0, "MHz", 0.9));
  f.push_back(make_finding("memory.cache_levels", 2.0, "", 0.9, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.L1.capacity_bytes", 16 * KiB, "B", 0.9, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.L1.latency_ns", 40.0, "ns", 0.9, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.L2.capacity_bytes", 1000 * KiB, "B", 0.8, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.L2.latency_ns", 150.0, "ns", 0.8, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.dram.latency_ns", 400.0, "ns", 0.9, {}, {}, {"latency.global"}));
  f.push_back(make_finding("memory.dram.bandwidth_gbps", 50.0, "GB/s", 0.85, {}, {}, {"bandwidth.read"}));
  f.push_back(make_finding("memory.L1.shared_by_cus", false, "", 0.8));
  f.push_back(make_finding("memory.L2.shared_by_cus", true, "", 0.8));
  f.push_back(make_finding("memory.line_bytes", 64.0, "B", 0.5));
  f.push_back(make_finding("exec.wave_width", 16.0, "", 0.9));
  f.push_back(make_finding("compute.fp32.fma.ops_per_clock_per_cu", 31.0, "op/clk/CU", 0.7));
  f.push_back(make_finding("compute.fp32.fma.latency_ns", 4.0, "ns", 0.9));
  f.push_back(make_finding("compute.int8.dp4a.ops_per_clock_per_cu", 31.0, "op/clk/CU", 0.7));
  return r;
}

const nlohmann::json& field(const nlohmann::json& j, const char* key) { return j.at(key); }
double value_of(const nlohmann::json& j) { return j.is_object() ? j.at("value").get<double>() : j.get<double>(); }

TEST(ModelBuilder, WritesADescriptionTheSimAcceptsWithEveryMeasuredValueSourced) {
  const GpuModel m = build_model(small_gpu());
  const sim::SimConfig c = sim::parse_sim_config(m.description, "model.json");
  ASSERT_EQ(c.caches.size(), 2u);
  // 16 KiB of 64 B lines in 16 ways: whole sets already.
  EXPECT_EQ(c.caches[0].capacity_bytes, 16 * 1024u);
  EXPECT_TRUE(c.caches[0].per_core);
  EXPECT_FALSE(c.caches[1].per_core);
  // 1000 KiB snapped to whole 1 KiB sets of 16 x 64 B.
  EXPECT_EQ(c.caches[1].capacity_bytes, 1000 * 1024u);
  EXPECT_DOUBLE_EQ(c.caches[1].hit_latency_ns, 150);
  EXPECT_DOUBLE_EQ(c.dram_latency_ns, 400);
  EXPECT_EQ(c.core.wave_width, 16u);
  EXPECT_EQ(c.core.lanes_per_unit, 32u);  // 31 op/clk snapped to a multiple of the wave
  const auto& l1 = field(field(m.description, "memory"), "caches")[0];
  EXPECT_EQ(l1.at("hit_latency_ns").at("basis"), "measured");
  EXPECT_EQ(l1.at("hit_latency_ns").at("source"), "memory.L1.latency_ns");
  EXPECT_EQ(l1.at("associativity").at("basis"), "assumed");
  EXPECT_FALSE(l1.at("associativity").at("note").get<std::string>().empty());
  EXPECT_GT(m.measured_values, 10u);
  EXPECT_GT(m.assumed_values, 0u);
  // dp4a has no sim kernel: it is left out, fma is listed with its latency.
  bool fma = false;
  for (const auto& op : c.rates.ops) {
    EXPECT_NE(op.op, "dp4a");
    if (op.type == "float" && op.op == "fma") {
      fma = true;
      EXPECT_DOUBLE_EQ(op.latency_ns, 4.0);
      EXPECT_DOUBLE_EQ(op.per_clock_per_core, 31.0);
    }
  }
  EXPECT_TRUE(fma);
  EXPECT_TRUE(m.contradictions.empty());
}

TEST(ModelBuilder, AnL2FasterThanTheL1IsNamedAndTheSurerReadingKept) {
  Results r = small_gpu();
  test::find_finding(r.findings, "memory.L2.latency_ns")->value = 30.0;  // faster than the L1's 40 ns
  const GpuModel m = build_model(r);
  ASSERT_EQ(m.contradictions.size(), 1u);
  EXPECT_NE(m.contradictions[0].resolution.find("not slower than"), std::string::npos);
  EXPECT_EQ(m.contradictions[0].findings.size(), 4u);
  const sim::SimConfig c = sim::parse_sim_config(m.description, "model.json");
  ASSERT_EQ(c.caches.size(), 1u);
  EXPECT_EQ(c.caches[0].capacity_bytes, 16 * 1024u);  // the L1's 0.9 over the L2's 0.8
  EXPECT_NE(model_file_json(m)["comment"]["contradictions"][0]["resolution"].get<std::string>().find("kept L1"),
            std::string::npos);
}

TEST(ModelBuilder, DramFasterThanTheLastLevelIsNamedAndPlacedPastIt) {
  Results r = small_gpu();
  test::find_finding(r.findings, "memory.dram.latency_ns")->value = 100.0;
  const GpuModel m = build_model(r);
  ASSERT_EQ(m.contradictions.size(), 1u);
  EXPECT_EQ(m.contradictions[0].field, "memory.dram.latency_ns");
  const sim::SimConfig c = sim::parse_sim_config(m.description, "model.json");
  EXPECT_GT(c.dram_latency_ns, c.caches.back().hit_latency_ns);
}

TEST(ModelBuilder, ARunWithNoFindingsStillGivesAValidDescriptionAllAssumedOrReported) {
  Results r;
  r.device.id = "test:1";
  r.device.type = "gpu";
  const GpuModel m = build_model(r);
  EXPECT_NO_THROW(sim::parse_sim_config(m.description, "model.json"));
  EXPECT_EQ(m.measured_values, 0u);
  EXPECT_FALSE(m.gaps.empty());  // the placeholder cache level is said
}

TEST(ModelBuilder, NonFiniteAndNegativeFindingsAreIgnoredNotWritten) {
  Results r = small_gpu();
  test::find_finding(r.findings, "memory.L2.capacity_bytes")->value = std::nan("");
  test::find_finding(r.findings, "memory.dram.bandwidth_gbps")->value = -5.0;
  const GpuModel m = build_model(r);
  const sim::SimConfig c = sim::parse_sim_config(m.description, "model.json");
  EXPECT_EQ(c.caches.size(), 1u);
  EXPECT_EQ(m.description["memory"]["dram"]["bandwidth_gbps"]["basis"], "assumed");
}

TEST(ModelBuilder, PlainDescriptionDropsAnnotations) {
  const GpuModel m = build_model(small_gpu());
  const auto plain = plain_description(m.description);
  EXPECT_TRUE(plain["memory"]["dram"]["latency_ns"].is_number());
  EXPECT_FALSE(plain.contains("comment"));
  EXPECT_DOUBLE_EQ(value_of(m.description["memory"]["dram"]["latency_ns"]), 400);
}

Series staircase(double l2_ns) {
  Series s;
  s.id = "latency.global";
  s.probe = "latency";
  s.x = {"footprint", "B"};
  s.y = {"latency", "ns"};
  for (double x = 4 * KiB; x <= 4 * MiB; x *= 2) {
    Point p;
    p.x = x;
    p.y = x <= 16 * KiB ? 40 : x <= 1 * MiB ? l2_ns : 400;
    p.samples = {p.y, p.y * 1.001, p.y * 0.999};
    s.points.push_back(p);
  }
  return s;
}

TEST(Replay, ATwinAtTheSamePointsIsReproduced) {
  const SeriesReplay r = compare_series(staircase(150), staircase(150));
  EXPECT_EQ(r.points, 11u);
  EXPECT_EQ(r.interpolated, 0u);
  EXPECT_DOUBLE_EQ(r.median_error, 0);
  EXPECT_TRUE(r.reproduced);
}

TEST(Replay, ATwinWhoseMiddleLevelIsOffByAThirdIsMissedWhereItIsOff) {
  const SeriesReplay r = compare_series(staircase(150), staircase(200));
  // Six of eleven points lie on the L2's plateau: the median is off.
  EXPECT_NEAR(r.median_error, 1.0 / 3, 1e-9);
  EXPECT_NEAR(r.worst_error, 1.0 / 3, 1e-9);
  EXPECT_GT(r.worst_x, 16 * KiB);
  EXPECT_LE(r.worst_x, 1 * MiB);
  EXPECT_FALSE(r.reproduced);
}

TEST(Replay, PointsBetweenTheTwinsPointsAreReadBetweenItsNeighbours) {
  Series measured = staircase(150);
  Series sparse = measured;
  sparse.points.erase(sparse.points.begin() + 1);  // 8 KiB gone from the twin
  const SeriesReplay r = compare_series(measured, sparse);
  EXPECT_EQ(r.interpolated, 1u);
  EXPECT_TRUE(r.reproduced);
}

TEST(Replay, ANoisySeriesIsHeldToItsOwnNoise) {
  Series noisy = staircase(150);
  for (auto& p : noisy.points) p.samples = {p.y * 0.9, p.y, p.y * 1.1};
  Series twin = staircase(150);
  for (auto& p : twin.points) p.y *= 1.15;
  const SeriesReplay r = compare_series(noisy, twin);
  EXPECT_NEAR(r.noise, 0.1, 1e-9);
  EXPECT_NEAR(r.tolerance, 0.3, 1e-9);
  EXPECT_TRUE(r.reproduced);  // 15% off, within three times its 10% spread
}

TEST(Replay, AFindingIsJudgedOnThePointsItWasReadFrom) {
  // The L2's plateau is a third off in the twin; the L1's and DRAM's are not.
  const Series measured = staircase(150);
  std::vector<Finding> findings = {
      make_finding("memory.L2.latency_ns", 150.0, "ns", 0.8, {}, {}, {"latency.global"}),
      make_finding("memory.L1.latency_ns", 40.0, "ns", 0.9, {}, {}, {"latency.global"}),
      make_finding("memory.L1.capacity_bytes", 16 * KiB, "B", 0.7, {}, {}, {"latency.global"}),
      make_finding("memory.cache_levels", 2.0, "", 0.6, {}, {}, {"latency.global"}),
      make_finding("compute.fp32.fma.ops_per_clock_per_cu", 32.0, "", 0.7, {}, {}, {"compute.fp32.fma"})};
  Replay replay;
  replay.series.push_back(compare_series(measured, staircase(200)));
  hold_findings_to_replay(findings, replay, {measured});
  const double over = (1.0 / 3) / kReproducedMedianError;
  // Its plateau's six points, all a third off.
  EXPECT_NEAR(findings[0].confidence, 0.8 / over, 1e-9);
  EXPECT_NE(findings[0].note.find("the 6 points of latency.global"), std::string::npos) << findings[0].note;
  // The L1's plateau is reproduced: untouched.
  EXPECT_DOUBLE_EQ(findings[1].confidence, 0.9);
  // The L1's step (within a factor 1.5 of 16 KiB: the 16 KiB point) is reproduced.
  EXPECT_DOUBLE_EQ(findings[2].confidence, 0.7);
  // A count is read from the whole curve, whose median is off.
  EXPECT_NEAR(findings[3].confidence, 0.6 / over, 1e-9);
  // No replayed evidence: untouched.
  EXPECT_DOUBLE_EQ(findings[4].confidence, 0.7);
  EXPECT_TRUE(findings[4].note.empty());
}

TEST(Replay, AReproducedSeriesLeavesItsFindingsAlone) {
  std::vector<Finding> findings = {make_finding("memory.L2.latency_ns", 150.0, "ns", 0.8, {}, {}, {"latency.global"})};
  Replay replay;
  replay.series.push_back(compare_series(staircase(150), staircase(151)));
  hold_findings_to_replay(findings, replay, {staircase(150)});
  EXPECT_DOUBLE_EQ(findings[0].confidence, 0.8);
  EXPECT_NE(replay_summary_line(replay).find("reproduces 1 of 1"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::model
