// The execution analysis (analysis/execution) on made-up curves shaped like
// the seeds' devices (Mali-G52: 8-wide, occupancy halved above 32
// registers, ~8 KB instruction cache, 6-7 B per add; Adreno: 64-wide, two
// scheduler partitions) and on the real curves recorded in tests/data.
#include "analysis/analyze.hpp"
#include "analysis/execution.hpp"
#include "report/results_json.hpp"

#include "recorded.hpp"

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

double value(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return number(f);
  ADD_FAILURE() << "no finding " << id;
  return -1;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::vector<double> list(const Finding& f) { return std::get<std::vector<double>>(f.value); }

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
  EXPECT_EQ(list(*cliffs), want);
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
  EXPECT_EQ(list(*cliffs), std::vector<double>{40});
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
  EXPECT_TRUE(list(*cliffs).empty());
  EXPECT_NE(cliffs->note.find("spilled"), std::string::npos);
}

TEST(Occupancy, LocalMemoryCliffs) {
  // 228 KiB per unit, at most 32 work-groups.
  const auto s = make_series("occupancy.local", {256, 4096, 8192, 16384, 32768}, [](double bytes) {
    return std::min(32.0, std::floor(233472 / (bytes + 1024)));
  });
  const auto fs = local_occupancy_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(list(fs[0]), (std::vector<double>{8192, 16384, 32768}));
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
  EXPECT_EQ(value(fs, "exec.icache_ops"), 512);
  EXPECT_NEAR(value(fs, "exec.icache_bytes"), 512 * 6.5, 1e-9);  // ~3.3 KB from the fitting body alone
  EXPECT_NE(find(fs, "exec.icache_ops")->note.find("second drop"), std::string::npos);
}

TEST(Icache, TextBinaryGivesOpsOnly) {
  const std::vector<double> bodies = {64, 256, 1024, 4096, 16384};
  const auto body = make_series("icache.body", bodies, [](double n) { return n <= 1024 ? 100.0 : 70; });
  Series binary = make_series(
      "icache.binary", bodies, [](double n) { return 2000 + 34 * n; }, 0);
  binary.meta["binary_format"] = "ptx";
  const auto fs = icache_findings(body, &binary);
  EXPECT_EQ(value(fs, "exec.icache_ops"), 1024);
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

// --- recorded curves (tests/data/README.md) ---

const Finding& need(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (f == nullptr) throw std::runtime_error("no finding " + id);
  return *f;
}

class H200Exec : public ::testing::TestWithParam<const char*> {};

// Wave width 32, 4 partitions per SM, 64 warps per SM, an instruction-cache
// knee at 2-3 K FADDs (32-48 KiB of 16-byte instructions), PTX text.
TEST_P(H200Exec, WarpPartitionsWavesIcache) {
  const Results r = load_recorded(GetParam());
  const Finding& w = need(r, "exec.wave_width");
  EXPECT_EQ(number(w), 32);
  EXPECT_GE(w.confidence, 0.8);
  const Finding& p = need(r, "exec.scheduler_partitions");
  EXPECT_EQ(number(p), 4);
  EXPECT_GE(p.confidence, 0.8);
  EXPECT_EQ(number(need(r, "exec.max_waves_per_cu")), 64);
  const double icache = number(need(r, "exec.icache_bytes"));
  EXPECT_GE(icache, 32 * 1024);
  EXPECT_LE(icache, 48 * 1024);
  const Finding& cb = need(r, "exec.code_bytes_per_op");
  EXPECT_NEAR(number(cb), 34, 2);
  EXPECT_NE(cb.note.find("PTX"), std::string::npos);
  // Local memory: 32 work-groups of 64 fit up to 4 KiB each, not at 8 KiB.
  const auto local = list(need(r, "exec.local.occupancy_cliffs_bytes"));
  ASSERT_FALSE(local.empty());
  EXPECT_EQ(local.front(), 8192);
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200Exec, ::testing::Values("h200_exec_run1.json", "h200_exec_run2.json"));

// The H100 with the third partition set: 3 waves at stride 3 run as fast as
// at stride 1 (they land on 3 of 4 partitions), which rules out 3 and 6;
// at stride 2 they slow to 0.63x, as 4 partitions predict.
class H100Partitions : public ::testing::TestWithParam<const char*> {};

TEST_P(H100Partitions, TriplesAgreeWithFour) {
  const Results r = load_recorded(GetParam());
  const Series* triples = r.find_series("divergence.partition_triples");
  ASSERT_NE(triples, nullptr);
  ASSERT_EQ(triples->points.size(), 3u);
  EXPECT_NEAR(triples->points[2].y / triples->points[0].y, 1.0, 0.05);  // stride 3
  EXPECT_LT(triples->points[1].y / triples->points[0].y, 0.75);         // stride 2
  const Finding& p = need(r, "exec.scheduler_partitions");
  EXPECT_EQ(number(p), 4);
  EXPECT_GE(p.confidence, 0.8);
  ASSERT_TRUE(p.low && p.high);
  EXPECT_EQ(*p.low, 4);
  EXPECT_EQ(*p.high, 4);
}

INSTANTIATE_TEST_SUITE_P(Recorded, H100Partitions,
                         ::testing::Values("h100_divergence_triples_run1.json", "h100_divergence_triples_run2.json"));

// The register sweep with ptxas' counts: cliffs where 65,536 registers per
// SM, dealt to 4 partitions in whole warps, lose a warp per partition.
TEST(H200ExecRecorded, RegisterCliffsAgreeWith64KRegistersPerSm) {
  const Results r = load_recorded("h200_exec_early.json");
  const Finding& cliffs = need(r, "exec.registers.occupancy_cliffs");
  EXPECT_EQ(cliffs.unit, "registers");
  EXPECT_EQ(list(cliffs), (std::vector<double>{48, 56, 64, 72, 80, 96}));
  // waves = 4 x floor(16384 / (32 x registers)): 48 -> 40, 56 -> 36, 64 -> 32, 72 -> 28, 80 -> 24, 96 -> 20.
  const Series* s = r.find_series("occupancy.registers");
  ASSERT_NE(s, nullptr);
  const double full = s->points.front().y;  // 32 registers: 64 warps
  for (const auto& k : s->meta["kernels"]) {
    const double used = k["registers_used"].get<double>();
    if (used <= 32) continue;
    const double want = 4 * std::floor(16384 / (32 * used)) / 64;
    for (const auto& p : s->points)
      if (p.x == k["regs"].get<double>()) EXPECT_NEAR(p.y / full, want, 0.03) << used << " registers";
  }
  const Finding& rf = need(r, "exec.registers.per_cu");
  EXPECT_NEAR(number(rf), 65536, 0.05 * 65536);
}

// The quick form on the H200: the same width and waves from fewer points.
TEST(H200ExecRecorded, QuickForm) {
  const Results r = load_recorded("h200_exec_quick.json");
  EXPECT_EQ(number(need(r, "exec.wave_width")), 32);
  const Finding& waves = need(r, "exec.max_waves_per_cu");
  EXPECT_LE(*waves.low, 64);
  EXPECT_GE(*waves.high, 64);
}

class PoclExec : public ::testing::TestWithParam<const char*> {};

// CPUs through PoCL: no lockstep lanes (wave width 1, a guess), no
// partition test, program binaries in PoCL's container.
TEST_P(PoclExec, HonestLowConfidence) {
  const Results r = load_recorded(GetParam());
  const Finding& w = need(r, "exec.wave_width");
  EXPECT_EQ(number(w), 1);
  EXPECT_LT(w.confidence, 0.5);
  EXPECT_EQ(r.find_finding("exec.scheduler_partitions"), nullptr);
  // A CPU's step time grows from the first doubling, or rises unevenly
  // (then there is no reading at all).
  if (const Finding* waves = r.find_finding("exec.max_waves_per_cu")) EXPECT_LT(waves->confidence, 0.5);
  const Finding& cb = need(r, "exec.code_bytes_per_op");
  EXPECT_NE(cb.note.find("PoCL"), std::string::npos);
  EXPECT_EQ(r.find_finding("exec.icache_bytes"), nullptr);  // no machine-code size known
}

INSTANTIATE_TEST_SUITE_P(Recorded, PoclExec,
                         ::testing::Values("pocl_xeon_basic_exec_quick.json", "pocl_xeon_pthread_exec.json",
                                           "pocl_epyc_basic_exec_quick.json"));

}  // namespace
}  // namespace gpuscope
