#include "core/finding_catalogue.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "report/results_json.hpp"

namespace gpuscope {
namespace {

TEST(FindingCatalogue, NamesCacheLevelsAndPlacesThemInTheTable) {
  const FindingDisplay l2 = describe_finding("memory.L2.capacity_bytes");
  EXPECT_TRUE(l2.known);
  EXPECT_EQ(l2.name, "L2 capacity");
  EXPECT_EQ(l2.area, "Memory hierarchy");
  EXPECT_EQ(l2.level, "L2");
  EXPECT_EQ(l2.column, "capacity");
  const FindingDisplay dram = describe_finding("memory.dram.latency_ns");
  EXPECT_EQ(dram.level, "dram");
  EXPECT_EQ(dram.column, "latency");
  // A level's other findings, and the TLB's levels, are lines, not table cells.
  EXPECT_TRUE(describe_finding("memory.L1.fetch_bytes").level.empty());
  const FindingDisplay tlb = describe_finding("memory.tlb.L2.reach_bytes");
  EXPECT_EQ(tlb.name, "tlb L2 reach");
  EXPECT_TRUE(tlb.level.empty());
}

TEST(FindingCatalogue, FillsEveryPlaceholderOfTheName) {
  EXPECT_EQ(describe_finding("compute.fp16.fma.throughput_gops").name, "fp16 fma throughput");
  EXPECT_EQ(describe_finding("memory.coalescing.stride_8_ratio").name, "stride 8 copy vs unit stride");
  EXPECT_EQ(describe_finding("app.lbm.fp16s.effective_gbps").name, "LBM fp16s effective bandwidth");
  EXPECT_EQ(describe_finding("compute.dual_issue.fp32_fma_add").name, "dual issue fp32 fma + add");
  EXPECT_EQ(describe_finding("compute.matrix.f16xf16->f32.16x16x16.throughput_gops").name,
            "matrix f16xf16->f32 16x16x16 throughput");
}

TEST(FindingCatalogue, UnknownIdsAreNamedBySelfUnderOther) {
  for (const char* id : {"vendor.special", "memory.L1x.capacity_bytes", "memory.L1.capacity_bytes.extra", ""}) {
    const FindingDisplay d = describe_finding(id);
    EXPECT_FALSE(d.known) << id;
    EXPECT_EQ(d.name, id);
    EXPECT_EQ(d.area, "Other");
  }
}

TEST(FindingCatalogue, RanksAnAreasFindingsByTheirIdsFirstPart) {
  EXPECT_LT(describe_finding("host.h2d_gbps").order, describe_finding("launch.dispatch_us").order);
  EXPECT_LT(describe_finding("launch.dispatch_us").order, describe_finding("atomics.global.latency_ns").order);
  EXPECT_EQ(describe_finding("memory.L1.latency_ns").order, describe_finding("memory.tlb.reach_bytes").order);
  EXPECT_EQ(area_titles().front(), "Memory hierarchy");
  EXPECT_EQ(area_titles().back(), "Other");
}

// Every finding gpuscope has written into the recorded runs and the examples
// is in the catalogue, so every report names and places it.
TEST(FindingCatalogue, KnowsEveryRecordedFinding) {
  namespace fs = std::filesystem;
  std::set<std::string> unknown;
  size_t files = 0;
  for (const auto* root : {GPUSCOPE_TEST_DATA, GPUSCOPE_SOURCE_DIR "/docs/examples"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.path().extension() != ".json") continue;
      Results r;
      try {
        r = read_results_file(entry.path().string());
      } catch (const std::exception&) {
        continue;  // not a results file (reference profiles, sim descriptions)
      }
      ++files;
      for (const auto& f : r.findings)
        if (!f.display.known) unknown.insert(f.id + " (" + entry.path().filename().string() + ")");
    }
  }
  EXPECT_GT(files, 10u);
  for (const auto& id : unknown) ADD_FAILURE() << "not in the finding catalogue: " << id;
}

}  // namespace
}  // namespace gpuscope
