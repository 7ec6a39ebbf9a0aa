// The coalescing, TLB and cache-geometry analyses on curves recorded on the
// H200 of the GPU test machine and on CPUs through PoCL (tests/data/README.md).
#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gpuscope {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

const Finding* get(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (f == nullptr) ADD_FAILURE() << "no finding " << id;
  return f;
}

double value(const Results& r, const std::string& id) {
  const Finding* f = get(r, id);
  return f ? number(*f) : -1;
}

class H200Coalescing : public ::testing::TestWithParam<const char*> {};

// The Adreno 320/420 paper's three copies on the H200 (max work-group 256 for this
// kernel there): misaligned starts cost ~3%, strides fall to 64 B and level
// off (the L2 fetches 64 B from HBM), the group sweep grows linearly to 192-256.
TEST_P(H200Coalescing, ReadsOffsetStrideAndGroupCurves) {
  const Results r = load_recorded(GetParam());
  const double mis = value(r, "memory.coalescing.misaligned_ratio");
  EXPECT_GE(mis, 0.93);
  EXPECT_LE(mis, 1.0);
  EXPECT_NEAR(value(r, "memory.coalescing.stride_2_ratio"), 0.9, 0.05);
  EXPECT_NEAR(value(r, "memory.coalescing.stride_16_ratio"), 0.2, 0.03);
  double previous = 1;
  for (int k : {2, 4, 8, 16, 32, 64}) {
    const double q = value(r, "memory.coalescing.stride_" + std::to_string(k) + "_ratio");
    EXPECT_LT(q, previous) << k;
    previous = q;
  }
  EXPECT_EQ(value(r, "memory.coalescing.segment_bytes"), 64);
  const double sat = value(r, "memory.coalescing.saturating_workgroup_size");
  EXPECT_GE(sat, 192);
  EXPECT_LE(sat, 256);
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200Coalescing,
                         ::testing::Values("h200/coalescing_first.json", "h200/coalescing_second.json",
                                           "h200/coalescing_tlb_geometry_quick.json"));

class H200Geometry : public ::testing::TestWithParam<const char*> {};

// NVIDIA's L1: 128 B lines filled in 32 B sectors, one per SM; the L2 is one
// cache for all SMs.
TEST_P(H200Geometry, SectoredPrivateL1SharedL2) {
  const Results r = load_recorded(GetParam());
  EXPECT_EQ(value(r, "memory.L1.fetch_bytes"), 32);
  const Finding* l1 = get(r, "memory.L1.shared_by_cus");
  const Finding* l2 = get(r, "memory.L2.shared_by_cus");
  ASSERT_TRUE(l1 && l2);
  EXPECT_FALSE(std::get<bool>(l1->value));
  EXPECT_TRUE(std::get<bool>(l2->value));
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200Geometry,
                         ::testing::Values("h200/geometry.json", "h200/coalescing_tlb_geometry_quick.json",
                                           "h200/geometry_tlb_opencl_first.json",
                                           "h200/geometry_tlb_opencl_second.json",
                                           "h200/geometry_tlb_opencl_third.json",
                                           "h200/geometry_tlb_vulkan_first.json",
                                           "h200/geometry_tlb_vulkan_second.json",
                                           "h200/latency_geometry_mid_pairs_not_run.json"));

TEST(H200Geometry, LineIs128Bytes) {
  const Results r = load_recorded("h200/geometry.json");
  EXPECT_EQ(value(r, "memory.line_bytes"), 128);
}

// The line sweeps placed around the first level's end, and the near pairs
// sized by it, through both APIs: the 32 B sweep from 2 KiB, the larger
// strides from a quarter of where it left the L1 (its rise begins at 16 KiB
// on the H200, though the L1 holds 256 KiB: a gradual climb that each stride
// shows at a footprint in proportion to it). Every stride still reaches the
// L2's plateau, and the line reads 128 B, no surer than 0.7: the curves
// scatter about the model by 12 to 17% (the gradual climb pulls the 32 B
// stride's half-hit down).
TEST(H200Geometry, SweepsSizedByTheL1ReadTheLineAndItsSector) {
  for (const char* file : {"h200/geometry_tlb_opencl_first.json", "h200/geometry_tlb_opencl_second.json",
                           "h200/geometry_tlb_opencl_third.json", "h200/geometry_tlb_vulkan_first.json",
                           "h200/geometry_tlb_vulkan_second.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    const Finding* line = get(r, "memory.line_bytes");
    ASSERT_NE(line, nullptr);
    EXPECT_EQ(number(*line), 128);
    EXPECT_LE(line->confidence, 0.7);
    const Series* first = r.find_series("geometry.line_32");
    ASSERT_TRUE(first && !first->points.empty());
    EXPECT_LE(first->points.front().x, 2048);
    EXPECT_FALSE(first->meta.contains("swept_around_bytes"));
    for (int stride : {64, 128, 256, 512}) {
      const Series* s = r.find_series("geometry.line_" + std::to_string(stride));
      ASSERT_NE(s, nullptr) << stride;
      EXPECT_TRUE(s->meta.contains("swept_around_bytes")) << stride;
      // Past the L1 (128 B and up: 256 KiB x S / 128) onto the L2's plateau.
      EXPECT_GT(s->points.back().y, 3 * s->points.front().y) << stride;
    }
    // The near pairs at 16x the 32 B sweep's half-hit footprint (150 to
    // 165 KiB; the gradual climb puts it under the L1's 256 KiB), still
    // past the L1 in lines and so still showing its 32 B sector.
    const Series* near = r.find_series("geometry.pairs_near");
    ASSERT_NE(near, nullptr);
    const double first_level = near->meta.value("first_level_bytes", 0.0);
    EXPECT_GT(first_level, 128 * 1024);
    EXPECT_LT(first_level, 256 * 1024);
    EXPECT_NEAR(near->meta.value("footprint_bytes", 0.0), 16 * first_level, 1024);
  }
}

// The H200's page-strided chases cost no more than the control wherever the
// control is steady, up to 1 GiB (the 64 KiB stride: +3.5 ns at most, under
// the 10% a step needs); a 2 MiB-strided chase was 20 ns slower at 2 GiB but
// inside the L1's overflow, where layouts differ by cache sets, and the
// latency probe's chase is flat (+0.2%) from 1 to 2 GiB. So: no TLB level
// runs out below 1 GiB; the reach is reported as that lower bound.
TEST(H200Tlb, NoTranslationCostUpToAGiB) {
  const Results r = load_recorded("h200/coalescing_tlb_geometry_quick.json");
  const Finding* reach = get(r, "memory.tlb.reach_bytes");
  ASSERT_NE(reach, nullptr);
  EXPECT_GE(number(*reach), 512 * MiB);
  EXPECT_FALSE(reach->high.has_value());  // a lower bound
  EXPECT_EQ(r.find_finding("memory.tlb.miss_penalty_ns"), nullptr);
}

// A CPU's caches lie past its first-level TLB's reach: on this Zen 5 VM the
// tlb probe measured 0.4 MiB and 2 ns a miss, and the L2 (1 MiB, ~3 ns)
// runs out into an L3 more than 10 ns away. A step that large is a cache,
// not translation; the EPYC example run of docs/ reads the same way.
TEST(PoclTlb, StepsLargerThanTheMissPenaltyAreCaches) {
  for (const char* name : {"pocl_zen5/pthread_full_run.json", "../../docs/examples/pocl/results.json"}) {
    SCOPED_TRACE(name);
    const Results r = load_recorded(name);
    const Finding* reach = get(r, "memory.tlb.reach_bytes");
    const Finding* penalty = get(r, "memory.tlb.miss_penalty_ns");
    ASSERT_TRUE(reach && penalty);
    EXPECT_LT(number(*reach), 1 * MiB);
    EXPECT_LT(number(*penalty), 4);
    EXPECT_GE(value(r, "memory.cache_levels"), 3);
    const double l2 = value(r, "memory.L2.capacity_bytes");
    EXPECT_GE(l2, 0.5 * MiB);
    EXPECT_LE(l2, 2 * MiB);
    EXPECT_GT(value(r, "memory.L3.latency_ns"), 3 * value(r, "memory.L2.latency_ns"));
    if (const Finding* dram = r.find_finding("memory.dram.latency_ns")) EXPECT_GT(number(*dram), 40);
  }
}

// Measured together with the latency probe (the H200's recorded curve), the
// reach finding says how the latency curve stands past it.
TEST(H200Tlb, ReachNoteReadsTheLatencyCurve) {
  Results r = read_recorded("h200/coalescing_tlb_geometry_quick.json");
  const Results lat = read_recorded("h200/latency_p10_revisited_first.json");
  r.series.insert(r.series.end(), lat.series.begin(), lat.series.end());
  r.findings = analysis::analyze_all(r);
  const Finding* f = get(r, "memory.tlb.reach_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->note.find("latency.global rises"), std::string::npos) << f->note;
  EXPECT_NE(r.find_finding("memory.L1.capacity_bytes"), nullptr);
}

// Where the sharing sweep's lone chase shows no third level ending (8 MiB a
// group on the H200, inside its 60 MB L2), no mid pairs run, so the L2's
// fetch unit is not read: it is listed as unfound, saying why, not guessed.
TEST(H200Geometry, NoMidPairsLeaveTheL2FetchUnfound) {
  const Results r = read_recorded("h200/latency_geometry_mid_pairs_not_run.json");
  ASSERT_EQ(r.find_series("geometry.pairs_mid"), nullptr);
  const analysis::Analysis a = analysis::analyze_with_gaps(r);
  for (const Finding& f : a.findings) EXPECT_NE(f.id, "memory.L2.fetch_bytes");
  const auto unfound = std::find_if(a.unfound.begin(), a.unfound.end(),
                                    [](const Unfound& u) { return u.id == "memory.L2.fetch_bytes"; });
  ASSERT_NE(unfound, a.unfound.end());
  EXPECT_NE(unfound->reason.find("no mid pairs"), std::string::npos) << unfound->reason;
}

// The fixed binary (chases continue across launches, 2 GiB + 4 KiB chase
// buffers) on the H200: the far-pairs fetch unit is the L2's 64 B from HBM,
// and the 2 MiB-strided chase shows a small first translation step past
// 512 MiB (3.6 ns, at a confidence that says it is weak), none below.
TEST(H200Geometry, FixedBinaryReadsBothFetchUnitsAndASmallTlbStep) {
  const Results r = load_recorded("h200/tlb_geometry_launch.json");
  EXPECT_EQ(value(r, "memory.L1.fetch_bytes"), 32);
  EXPECT_EQ(value(r, "memory.L2.fetch_bytes"), 64);
  EXPECT_EQ(value(r, "memory.line_bytes"), 128);
  EXPECT_GE(value(r, "memory.tlb.reach_bytes"), 512 * MiB);
  const double penalty = value(r, "memory.tlb.miss_penalty_ns");
  EXPECT_GT(penalty, 0);
  EXPECT_LT(penalty, 10);
  EXPECT_LE(get(r, "memory.tlb.reach_bytes")->confidence, 0.6);
}

// CPUs through PoCL (noisy VMs): the analysis runs and says something
// plausible; exact figures are not asserted.
class PoclMemory : public ::testing::TestWithParam<const char*> {};

TEST_P(PoclMemory, AnalysisRunsAndStaysInRange) {
  const Results r = load_recorded(GetParam());
  const double mis = value(r, "memory.coalescing.misaligned_ratio");
  EXPECT_GT(mis, 0);
  EXPECT_LT(mis, 2);
  // A 256 B stride on a CPU uses one element of each 64 B line.
  EXPECT_LT(value(r, "memory.coalescing.stride_64_ratio"), 0.5);
  const double reach = value(r, "memory.tlb.reach_bytes");
  EXPECT_GT(reach, 16 * 1024);
  for (const auto& f : r.findings) {
    EXPECT_GE(f.confidence, 0) << f.id;
    EXPECT_LE(f.confidence, 1) << f.id;
    EXPECT_FALSE(f.evidence.empty() && f.method != "reported by the driver") << f.id;
  }
}

INSTANTIATE_TEST_SUITE_P(Recorded, PoclMemory,
                         ::testing::Values("pocl_epyc/basic_coalescing_tlb_geometry.json", "pocl_xeon/basic_coalescing_tlb_geometry.json"));

}  // namespace
}  // namespace gpuscope
