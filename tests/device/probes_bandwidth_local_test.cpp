// The bandwidth and local probes end to end on the CPU through PoCL, in
// their --quick form: every kernel's result is checked by the probes
// themselves (a wrong sum or wrong data fails the run with exit code 1), so
// a run that exits 0 has validated every launch. No timed assertions: the
// CI VM is shared and noisy; shapes, presence and plausible ranges only.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuscope {
namespace {

// One quick run of both probes (ctest runs each TEST in its own process,
// so the two probes are checked in one TEST to pay for one run).
Results quick_run() {
  const Results results = [] {
    const auto dir = test::fresh_temp_dir("pocl_bandwidth_local");
    const auto r = test::run_gpuscope(
        "run --quick --quiet --probes bandwidth,local --device " + cpu_device_id() + " --out " + dir.string(),
        "POCL_DEVICES=basic");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_results_file((dir / "results.json").string());
  }();
  return results;
}

void check_bandwidth(const Results& r) {
  EXPECT_TRUE(r.skipped.empty());
  for (const char* id : {"bandwidth.read", "bandwidth.write", "bandwidth.copy"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_EQ(s->x.unit, "B");
    EXPECT_EQ(s->y.unit, "GB/s");
    EXPECT_GE(s->points.size(), 5u) << id;
    EXPECT_GE(s->points.back().x, 16 * 1024 * 1024) << id;  // well past the CPU's L2
    for (const auto& p : s->points) {
      EXPECT_GE(p.samples.size(), 3u);
      EXPECT_GT(p.y, 0.01) << id << " at " << p.x;  // GB/s: any real machine moves more
      EXPECT_LT(p.y, 10000) << id << " at " << p.x;
    }
  }
  for (const char* id : {"bandwidth.vector_width.cache", "bandwidth.vector_width.dram"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    ASSERT_EQ(s->points.size(), 3u);  // 1, 4 and 16 words in quick mode
    EXPECT_EQ(s->points.front().x, 1);
    EXPECT_EQ(s->points.back().x, 16);
  }
  // The other layouts at the largest footprint: two grid-stride shapes and
  // one whole-grid shape in quick mode, every launch validated.
  for (const char* id : {"bandwidth.stream.read", "bandwidth.stream.write", "bandwidth.stream.copy",
                         "bandwidth.grid.write", "bandwidth.grid.copy"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_EQ(s->x.unit, "B");
    EXPECT_EQ(s->points.size(), std::string(id).find(".grid.") != std::string::npos ? 1u : 2u) << id;
    EXPECT_GE(s->meta["footprint_bytes"].get<double>(), 16 * 1024 * 1024) << id;
    for (const auto& p : s->points) {
      EXPECT_GE(p.samples.size(), 3u);
      EXPECT_GT(p.y, 0.01) << id << " at " << p.x;
      EXPECT_LT(p.y, 10000) << id << " at " << p.x;
    }
  }
  const Series* wg = r.find_series("bandwidth.workgroups");
  ASSERT_NE(wg, nullptr);
  EXPECT_EQ(wg->points.front().x, 1);
  EXPECT_GE(wg->points.back().x, 4 * r.device.compute_units);
  // Bytes moved per launch are recorded with every point.
  EXPECT_GT(r.find_series("bandwidth.read")->meta["detail"][0]["bytes_per_launch"].get<double>(), 0);
  // No bandwidth finding is required: on a shared 2-core VM the curve may
  // hold no flat run of three points.
}

void check_local(const Results& r) {
  for (const char* id : {"local.latency", "local.global_latency"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    ASSERT_EQ(s->points.size(), 1u);
    EXPECT_GT(s->points[0].y, 0.05);  // ns per dependent load
    EXPECT_LT(s->points[0].y, 1000);
  }
  for (const char* id : {"local.bandwidth", "local.global_bandwidth"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    ASSERT_EQ(s->points.size(), 3u);  // 4-, 8- and 16-byte reads
    for (const auto& p : s->points) EXPECT_GT(p.y, 0.01);
  }
  const Finding* cap = r.find_finding("local.capacity_bytes");
  ASSERT_NE(cap, nullptr);
  EXPECT_GT(number(*cap), 0);
  EXPECT_LE(number(*cap), static_cast<double>(r.device.local_mem_bytes));
  for (const char* id : {"local.latency_ns", "local.bandwidth_gbps", "local.on_chip"})
    EXPECT_NE(r.find_finding(id), nullptr) << id;
}

TEST(BandwidthAndLocalOnPocl, QuickRunValidatesAndHasItsShapes) {
  const Results r = quick_run();
  {
    SCOPED_TRACE("bandwidth");
    check_bandwidth(r);
  }
  {
    SCOPED_TRACE("local");
    check_local(r);
  }
}

}  // namespace
}  // namespace gpuscope
