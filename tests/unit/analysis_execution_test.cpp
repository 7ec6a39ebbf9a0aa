// The execution analysis (analysis/execution) on made-up curves shaped like
// the seed articles' devices (Mali-G52: 8-wide, occupancy halved above 32
// registers, ~8 KB instruction cache, 6-7 B per add; Adreno: 64-wide, two
// scheduler partitions); tests/recorded/execution_test.cpp runs it on real
// curves.
#include "analysis/analyze.hpp"
#include "analysis/execution.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>

namespace gpuscope {
namespace {

using analysis::code_bytes_findings;
using analysis::icache_findings;
using analysis::local_occupancy_findings;
using analysis::max_waves_findings;
using analysis::occupancy_findings;
using analysis::partition_findings;
using analysis::wave_width_findings;

// A series y = f(x) at xs, each point with five samples spread by `noise`
// (relative, deterministic).
Series make_series(const std::string& id, const std::vector<double>& xs,
                   const std::function<double(double)>& f, double noise = 0.005) {
  Series s;
  s.id = id;
  for (size_t i = 0; i < xs.size(); ++i) {
    Point p;
    p.x = xs[i];
    const double y = f(xs[i]);
    for (int k = 0; k < 5; ++k) p.samples.push_back(y * (1 + noise * std::sin(3.7 * (double)(i * 5 + k))));
    p.y = y;
    s.points.push_back(p);
  }
  return s;
}

std::vector<double> powers_of_two(double from, double to) {
  std::vector<double> xs;
  for (double x = from; x <= to; x *= 2) xs.push_back(x);
  return xs;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

// --- wave width ---

class WaveWidth : public ::testing::TestWithParam<double> {};

TEST_P(WaveWidth, StepToFullSpeedAtTheWidth) {
  const double width = GetParam();
  const auto s = make_series("divergence.blocks", powers_of_two(1, 256),
                             [&](double b) { return b >= width ? 100.0 : 50.0; });
  const auto fs = wave_width_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), width);
  EXPECT_EQ(*fs[0].low, width);
  EXPECT_EQ(*fs[0].high, width);
  EXPECT_GE(fs[0].confidence, 0.8);
}

// Mali-G52 (the Mali-G52 article): 8; NVIDIA: 32; Adreno 6xx (the Mali-G52 article's comparison): 64.
INSTANTIATE_TEST_SUITE_P(Seeds, WaveWidth, ::testing::Values(8.0, 32.0, 64.0));

TEST(WaveWidth, FlatCurveIsOneWithLowConfidence) {
  const auto s = make_series(
      "divergence.blocks", powers_of_two(1, 256), [](double) { return 5.0; }, 0.03);
  const auto fs = wave_width_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 1);
  EXPECT_LT(fs[0].confidence, 0.5);
}

TEST(WaveWidth, StepOtherThanTwofoldLowersConfidence) {
  const auto s = make_series("divergence.blocks", powers_of_two(1, 256),
                             [](double b) { return b >= 16 ? 100.0 : 70.0; });
  const auto fs = wave_width_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 16);
  EXPECT_LT(fs[0].confidence, 0.8);
}

// --- scheduler partitions ---

// Throughput of `active` waves at each stride on `partitions` round-robin
// partitions, by dealing the waves out one by one: the busiest partition
// sets the time.
Series partition_series(const std::string& id, double active, std::vector<double> strides, double partitions) {
  Series s = make_series(id, strides, [&](double stride) {
    std::vector<int> load(static_cast<size_t>(partitions), 0);
    for (int w = 0; w < static_cast<int>(active); ++w)
      ++load[static_cast<size_t>(w * static_cast<long>(stride)) % load.size()];
    return 100.0 * active / *std::max_element(load.begin(), load.end());
  });
  s.meta["active_waves_per_group"] = active;
  return s;
}

class Partitions : public ::testing::TestWithParam<double> {};

TEST_P(Partitions, RoundRobinModelRecoversTheCount) {
  const double p = GetParam();
  const Series four = partition_series("divergence.partition", 4, {1, 2}, p);
  const Series two = partition_series("divergence.partition_pairs", 2, {1, 2, 4}, p);
  const Series three = partition_series("divergence.partition_triples", 3, {1, 2, 3, 4}, p);
  const auto fs = partition_findings({&four, &two, &three});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), p);
  EXPECT_GE(fs[0].confidence, 0.8);
}

// Adreno 530 (the Adreno 530 article): 2; NVIDIA since Volta: 4; Mali-G52: 3 execution
// engines per core.
INSTANTIATE_TEST_SUITE_P(Seeds, Partitions, ::testing::Values(2.0, 3.0, 4.0));

TEST(Partitions, PowerOfTwoStridesCannotSeeThree) {
  // Without the triples' stride 3, three partitions look like one.
  const Series four = partition_series("divergence.partition", 4, {1, 2}, 3);
  const Series two = partition_series("divergence.partition_pairs", 2, {1, 2, 4}, 3);
  const auto fs = partition_findings({&four, &two});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 1);
  EXPECT_LT(fs[0].confidence, 0.5);
}

TEST(Partitions, NoEffectIsAmbiguousAndSaysSo) {
  const Series four = partition_series("divergence.partition", 4, {1, 2}, 1);
  const Series two = partition_series("divergence.partition_pairs", 2, {1, 2, 4}, 1);
  const auto fs = partition_findings({&four, &two});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 1);
  EXPECT_LT(fs[0].confidence, 0.5);  // 8 or more partitions would look the same
  EXPECT_NE(fs[0].note.find("cannot tell"), std::string::npos);
}

// --- waves per compute unit ---

TEST(MaxWaves, FlatThenDoubledStepTime) {
  const std::vector<double> items = {256, 512, 1024, 2048, 2112, 4096};
  const auto s = make_series("occupancy.waves", items, [](double x) { return x <= 2048 ? 1200.0 : 2300.0; });
  const auto fs = max_waves_findings(s, 32, false);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 64);
  EXPECT_GE(fs[0].confidence, 0.8);
}

TEST(MaxWaves, GrowingFromTheStartIsAGuessOnACpu) {
  const auto s = make_series("occupancy.waves", {64, 128, 256}, [](double x) { return 10.0 * x; });
  const auto fs = max_waves_findings(s, 8, true);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_LT(fs[0].confidence, 0.5);
}

// Mali-G52: one group of 384 (48 waves of 8) per core, two take two rounds.
TEST(MaxWaves, OneLargestGroupPerUnitOnAGpu) {
  const auto s = make_series("occupancy.waves", {384, 768}, [](double x) { return x <= 384 ? 3100.0 : 6200.0; });
  const auto fs = max_waves_findings(s, 8, false);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 48);
  EXPECT_GE(fs[0].confidence, 0.5);
  EXPECT_EQ(*fs[0].high, 95);  // up to 767 work-items
  EXPECT_NE(fs[0].note.find("One work-group of 384"), std::string::npos) << fs[0].note;
}

TEST(MaxWaves, GradualRiseGivesNothing) {
  const auto s = make_series("occupancy.waves", {256, 512, 1024, 2048, 4096},
                             [](double x) { return 1000.0 * (1 + x / 4096); });
  EXPECT_TRUE(max_waves_findings(s, 32, false).empty());
}

// --- occupancy cliffs ---

// Registers used = live values + 8; waves = min(16, floor(512 / used)) per
// partition of a 4-partition unit with 64 waves at most (NVIDIA-like); or
// Mali-like: full occupancy up to 32, half above.
Series register_series(const std::vector<double>& live, const std::function<double(double)>& waves,
                       double overhead) {
  Series s = make_series("occupancy.registers", live, [&](double r) { return 10.0 * waves(r + overhead); });
  s.meta["kernels"] = nlohmann::json::array();
  for (double r : live)
    s.meta["kernels"].push_back({{"regs", r}, {"registers_used", r + overhead}, {"private_mem_bytes", 0}});
  return s;
}

TEST(Occupancy, NvidiaLikeCliffsAndRegisterFile) {
  auto waves = [](double used) {
    const double alloc = std::ceil(used / 8) * 8;
    return std::min(64.0, 4 * std::floor(16384 / (32 * alloc)));
  };
  const Series s = register_series({8, 16, 24, 32, 40, 48, 56, 64, 72, 88, 120, 160}, waves, 8);
  const auto fs = occupancy_findings(s, 64.0, 32.0);
  const Finding* cliffs = find(fs, "exec.registers.occupancy_cliffs");
  ASSERT_NE(cliffs, nullptr);
  EXPECT_EQ(cliffs->unit, "registers");
  // Used counts 16..168; cliffs at the first count measured past 32, 40, 48, ...
  const std::vector<double> want = {40, 48, 56, 64, 72, 80, 96, 128, 168};
  EXPECT_EQ(test::finding_list(*cliffs), want);
  const Finding* rf = find(fs, "exec.registers.per_cu");
  ASSERT_NE(rf, nullptr);
  EXPECT_NEAR(number(*rf), 65536, 0.08 * 65536);
  EXPECT_LE(*rf->low, 65536 * 1.02);
}

TEST(Occupancy, MaliLikeHalvingAbove32) {
  const Series s = register_series(
      {8, 16, 24, 32, 40, 48, 56, 64}, [](double used) { return used <= 32 ? 16.0 : 8.0; }, 0);
  const auto fs = occupancy_findings(s, std::nullopt, std::nullopt);
  const Finding* cliffs = find(fs, "exec.registers.occupancy_cliffs");
  ASSERT_NE(cliffs, nullptr);
  EXPECT_EQ(test::finding_list(*cliffs), std::vector<double>{40});
  EXPECT_EQ(find(fs, "exec.registers.per_cu"), nullptr);  // waves per unit unknown
}

TEST(Occupancy, SpilledBuildsAndNoiseBumpsAreNotCliffs) {
  Series s = register_series(
      {8, 16, 24, 32, 40}, [](double) { return 10.0; }, 8);
  s.points[2].y *= 0.85;  // one slow point that the next ones climb back from
  s.meta["kernels"][4]["private_mem_bytes"] = 512;
  s.points[4].y *= 0.3;  // spilling: slower, but not occupancy
  const auto fs = occupancy_findings(s, std::nullopt, std::nullopt);
  const Finding* cliffs = find(fs, "exec.registers.occupancy_cliffs");
  ASSERT_NE(cliffs, nullptr);
  EXPECT_TRUE(test::finding_list(*cliffs).empty());
  EXPECT_NE(cliffs->note.find("spilled"), std::string::npos);
}

TEST(Occupancy, LocalMemoryCliffs) {
  // 228 KiB per unit, at most 32 work-groups.
  const auto s = make_series("occupancy.local", {256, 4096, 8192, 16384, 32768}, [](double bytes) {
    return std::min(32.0, std::floor(233472 / (bytes + 1024)));
  });
  const auto fs = local_occupancy_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(test::finding_list(fs[0]), (std::vector<double>{8192, 16384, 32768}));
}

// --- instruction cache and code size ---

TEST(Icache, SeedZeroMaliShape) {
  // Peak up to 512 adds, down past 1280 (the Mali-G52 article), ELF machine code of 6.5
  // bytes per add on top of a fixed header.
  const std::vector<double> bodies = {64, 128, 256, 512, 768, 1024, 1536, 2048, 4096};
  const auto body = make_series("icache.body", bodies, [](double n) {
    return n <= 512 ? 100.0 : n < 1280 ? 90 : 60;
  });
  Series binary = make_series(
      "icache.binary", bodies, [](double n) { return 4000 + 6.5 * n; }, 0);
  binary.meta["binary_format"] = "elf";
  const auto cb = code_bytes_findings(binary);
  ASSERT_EQ(cb.size(), 1u);
  EXPECT_NEAR(number(cb[0]), 6.5, 1e-9);
  const auto fs = icache_findings(body, &binary);
  EXPECT_EQ(test::finding_value(fs, "exec.icache_ops"), 512);
  EXPECT_NEAR(test::finding_value(fs, "exec.icache_bytes"), 512 * 6.5, 1e-9);  // ~3.3 KB from the fitting body alone
  EXPECT_NE(find(fs, "exec.icache_ops")->note.find("second drop"), std::string::npos);
}

TEST(Icache, TextBinaryGivesOpsOnly) {
  const std::vector<double> bodies = {64, 256, 1024, 4096, 16384};
  const auto body = make_series("icache.body", bodies, [](double n) { return n <= 1024 ? 100.0 : 70; });
  Series binary = make_series(
      "icache.binary", bodies, [](double n) { return 2000 + 34 * n; }, 0);
  binary.meta["binary_format"] = "ptx";
  const auto fs = icache_findings(body, &binary);
  EXPECT_EQ(test::finding_value(fs, "exec.icache_ops"), 1024);
  EXPECT_EQ(find(fs, "exec.icache_bytes"), nullptr);
  EXPECT_NE(code_bytes_findings(binary)[0].note.find("PTX"), std::string::npos);
}

TEST(Icache, NoDropIsALowerBound) {
  const auto body = make_series("icache.body", {64, 256, 1024, 4096}, [](double) { return 50.0; });
  const auto fs = icache_findings(body, nullptr);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 4096);
  EXPECT_LT(fs[0].confidence, 0.5);
}

}  // namespace
}  // namespace gpuscope
