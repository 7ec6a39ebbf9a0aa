// The bandwidth and local-memory analysis (analysis/bandwidth) on curves
// recorded on the H200 and on PoCL (tests/data/README.md).
#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuscope {
namespace {

// The H200 with the latency probe in the same results: plateaus matched to
// its L1, near-L2 half, whole L2 and DRAM. Published (data/reference/h200.json):
// L2 ~9.7-10 TB/s measured, HBM3e 4.8 TB/s spec (3.9-4.5 measured), shared
// memory 128 B/clk/SM = 33.4 TB/s at 132 SMs and 1.98 GHz.
TEST(RecordedBandwidth, H200MatchesTheLatencyLevels) {
  const Results r = load_recorded("h200/latency_bandwidth_local.json");
  EXPECT_NEAR(test::finding_value(r, "memory.L1.bandwidth_gbps"), 32300, 1500);
  const double l2 = test::finding_value(r, "memory.L2.bandwidth_gbps");
  EXPECT_GT(l2, 8500);
  EXPECT_LT(l2, 11000);
  const double dram = test::finding_value(r, "memory.dram.bandwidth_gbps");
  EXPECT_GT(dram, 4200);
  EXPECT_LT(dram, 4800);
  EXPECT_GT(test::finding_value(r, "memory.dram.write_gbps"), 3000);
  EXPECT_GT(test::finding_value(r, "memory.dram.copy_gbps"), 3000);
  EXPECT_NE(r.find_finding("memory.L2.bandwidth_gbps")->method.find("latency probe"), std::string::npos);
  EXPECT_EQ(test::finding_value(r, "memory.bandwidth.workgroup_period"), 132);
}

TEST(RecordedBandwidth, H200AloneStillFindsL1AndDram) {
  const Results r = load_recorded("h200/bandwidth_local.json");
  EXPECT_NEAR(test::finding_value(r, "memory.L1.bandwidth_gbps"), 32300, 1500);
  const double dram = test::finding_value(r, "memory.dram.bandwidth_gbps");
  EXPECT_GT(dram, 4200);
  EXPECT_LT(dram, 4800);
  EXPECT_EQ(test::finding_value(r, "memory.bandwidth.workgroup_period"), 132);
}

// The H200 with the grid-stride and whole-grid layouts (2026-11-22, after
// issue 3's write shortfall): the per-group cursor walk writes 3.6 TB/s and
// copies 3.4, the grid-stride layout 4.3 and 3.95, the whole grid (one uint4
// per work-item) 4.69 and 4.28, as CUDA does on the same GPU
// (h200/cuda_stream_bw.txt: 4.68 and 4.27). Issue 3's targets: read >= 4.45,
// write >= 4.0 TB/s.
TEST(RecordedBandwidth, H200DramIsTheBestLayout) {
  for (const char* file : {"h200/bandwidth_stream_latency.json", "h200/bandwidth_stream.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    const double read = test::finding_value(r, "memory.dram.bandwidth_gbps");
    EXPECT_GT(read, 4450);
    EXPECT_LT(read, 4800);  // the HBM3e spec
    const Finding* w = r.find_finding("memory.dram.write_gbps");
    ASSERT_NE(w, nullptr);
    EXPECT_GT(number(*w), 4500);
    EXPECT_LT(number(*w), 4800);
    EXPECT_EQ(w->evidence.front(), "bandwidth.grid.write");
    EXPECT_NE(w->method.find("uint4, one per work-item"), std::string::npos) << w->method;
    const Finding* c = r.find_finding("memory.dram.copy_gbps");
    ASSERT_NE(c, nullptr);
    EXPECT_GT(number(*c), 4100);
    EXPECT_LT(number(*c), 4800);
    EXPECT_EQ(c->evidence.front(), "bandwidth.grid.copy");
    // The cursor walk's own DRAM plateau, as the method quotes it, is the
    // old 3.6 TB/s: the layout, not the memory, made the difference.
    const Series* cursor = r.find_series("bandwidth.write");
    ASSERT_NE(cursor, nullptr);
    EXPECT_LT(cursor->points.back().y, 3800);
    // uint16 stores (each warp instruction covering a quarter of every line
    // it touches) are the slowest shape measured, far below uint4.
    const Series* sw = r.find_series("bandwidth.stream.write");
    ASSERT_NE(sw, nullptr);
    ASSERT_EQ(sw->points.size(), 5u);
    EXPECT_LT(sw->points.back().y, 0.5 * sw->points.front().y);
  }
}

// The median GB/s of the first row of bench/cuda_stream_bw.cu's output
// that starts with `label`; 0 where there is none.
double cuda_stream_gbps(const std::string& file, const std::string& label) {
  std::ifstream in(recorded_path(file));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(label, 0) != 0 || line.find("GB/s median") == std::string::npos) continue;
    double gbps = 0;
    std::istringstream(line.substr(label.size())) >> gbps;
    return gbps;
  }
  return 0;
}

// CUDA on the same H200, one vector per thread over the whole grid (the
// layout gpuscope's grid series use), is the ceiling: gpuscope's DRAM read,
// write and copy each come within 2% of its median.
TEST(RecordedBandwidth, H200DramAgreesWithTheCudaReference) {
  const std::string reference = "h200/cuda_stream_bw.txt";
  const double read = cuda_stream_gbps(reference, "read  full grid  u1");
  const double write = cuda_stream_gbps(reference, "write full grid u1 hash");
  const double copy = cuda_stream_gbps(reference, "copy  full grid u1");
  ASSERT_GT(read, 4000);
  ASSERT_GT(write, 4000);
  ASSERT_GT(copy, 4000);
  for (const char* file : {"h200/bandwidth_stream_latency.json", "h200/bandwidth_stream.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    EXPECT_NEAR(test::finding_value(r, "memory.dram.bandwidth_gbps") / read, 1.0, 0.02);
    EXPECT_NEAR(test::finding_value(r, "memory.dram.write_gbps") / write, 1.0, 0.02);
    EXPECT_NEAR(test::finding_value(r, "memory.dram.copy_gbps") / copy, 1.0, 0.02);
  }
}

TEST(RecordedLocal, H200SharedMemoryIsOnChip) {
  for (const char* file : {"h200/latency_bandwidth_local.json", "h200/bandwidth_local.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    // ~28-30 cycles at 1.98 GHz (published: 29-30).
    EXPECT_NEAR(test::finding_value(r, "local.latency_ns"), 14.5, 1.5);
    EXPECT_GT(test::finding_value(r, "local.bandwidth_gbps"), 30000);  // >= 90% of 128 B/clk/SM
    EXPECT_LT(test::finding_value(r, "local.bandwidth_gbps"), 33500);  // never above it
    EXPECT_EQ(test::finding_value(r, "local.capacity_bytes"), 48 * 1024 - 1024);
    EXPECT_EQ(test::finding_value(r, "local.on_chip"), 1);
  }
}

TEST(RecordedLocal, PoclLocalMemoryIsOrdinaryMemory) {
  for (const char* file :
       {"pocl_xeon/basic_bandwidth_local_quick.json", "pocl_epyc/basic_bandwidth_local_quick.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    EXPECT_EQ(test::finding_value(r, "local.on_chip"), 0);
    EXPECT_EQ(test::finding_value(r, "local.capacity_bytes"), static_cast<double>(r.device.local_mem_bytes));
    EXPECT_GT(test::finding_value(r, "local.latency_ns"), 0);
    EXPECT_EQ(r.find_finding("memory.bandwidth.workgroup_period"), nullptr);
  }
}

}  // namespace
}  // namespace gpuscope
