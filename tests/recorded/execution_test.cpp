// The execution analysis (analysis/execution) on the real curves recorded
// on the H200, the H100 and PoCL (tests/data/README.md).
#include "analysis/analyze.hpp"
#include "analysis/execution.hpp"
#include "report/results_json.hpp"

#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope {
namespace {

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
  const auto local = test::finding_list(need(r, "exec.local.occupancy_cliffs_bytes"));
  ASSERT_FALSE(local.empty());
  EXPECT_EQ(local.front(), 8192);
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200Exec, ::testing::Values("h200/exec_cold_cache.json", "h200/exec_warm_cache.json"));

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
                         ::testing::Values("h100/divergence_triples_first.json", "h100/divergence_triples_second.json"));

// The register sweep with ptxas' counts: cliffs where 65,536 registers per
// SM, dealt to 4 partitions in whole warps, lose a warp per partition.
TEST(H200ExecRecorded, RegisterCliffsAgreeWith64KRegistersPerSm) {
  const Results r = load_recorded("h200/exec_full_register_sweep.json");
  const Finding& cliffs = need(r, "exec.registers.occupancy_cliffs");
  EXPECT_EQ(cliffs.unit, "registers");
  EXPECT_EQ(test::finding_list(cliffs), (std::vector<double>{48, 56, 64, 72, 80, 96}));
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
  const Results r = load_recorded("h200/exec_quick.json");
  EXPECT_EQ(number(need(r, "exec.wave_width")), 32);
  const Finding& waves = need(r, "exec.max_waves_per_cu");
  EXPECT_LE(*waves.low, 64);
  EXPECT_GE(*waves.high, 64);
}

// The waves search past the largest groups (probes/occupancy.cpp,
// refine_waves) through both APIs: 32 groups of one warp resident per SM,
// not 33 (Hopper's 32 blocks per SM), then 64 warps in at most 32 groups
// fit and 65 do not: the slots to one warp. The _indexed_check runs are the
// probe whose host check sums each group's walk over its indexed cycle.
class H200Waves : public ::testing::TestWithParam<const char*> {};

TEST_P(H200Waves, TheGroupLimitThenTheSlotsToOneWarp) {
  const Results r = load_recorded(GetParam());
  const Finding& waves = need(r, "exec.max_waves_per_cu");
  EXPECT_EQ(number(waves), 64);
  ASSERT_TRUE(waves.low && waves.high);
  EXPECT_EQ(*waves.low, 64);
  EXPECT_EQ(*waves.high, 64);
  EXPECT_GE(waves.confidence, 0.8);
  const Series* s = r.find_series("occupancy.waves");
  ASSERT_NE(s, nullptr);
  const std::string refinement = s->meta["refinement"].get<std::string>();
  EXPECT_NE(refinement.find("32 groups of one wave (32 work-items) resident at once, 33 groups not"),
            std::string::npos)
      << refinement;
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200Waves,
                         ::testing::Values("h200/occupancy_waves_opencl.json",
                                           "h200/occupancy_waves_vulkan.json",
                                           "h200/occupancy_indexed_check_opencl.json",
                                           "h200/occupancy_indexed_check_vulkan.json"));

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
                         ::testing::Values("pocl_xeon/basic_exec_quick.json", "pocl_xeon/pthread_exec.json",
                                           "pocl_epyc/basic_exec_quick.json"));

}  // namespace
}  // namespace gpuscope
