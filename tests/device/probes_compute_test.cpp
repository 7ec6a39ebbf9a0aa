// The compute and oplatency probes on the CPU through PoCL (the device every
// CI machine has), through the command line: every kernel of the quick
// matrix builds, validates against the host and yields findings of a
// plausible size; what the device lacks (half precision) is reported as
// unsupported with a reason, never as a rate. No timed assertions: the CI VM
// is noisy.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace gpuscope {
namespace {

TEST(ComputeProbesOnPocl, QuickRunValidatesAndFindsRates) {
  const std::string id = cpu_device_id();
  ASSERT_FALSE(id.empty());
  const auto dir = test::fresh_temp_dir("pocl_compute");
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --quick --probes compute,oplatency --device " + id + " --out " + dir.string(),
      "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << res.skipped.front().reason;

  // A slow machine's budget may end the quick matrix early; what it did not
  // reach must then be listed, never missing silently. fp32 fma comes first.
  const Series* summary = res.find_series("compute.summary");
  ASSERT_NE(summary, nullptr);
  const std::string not_measured = summary->meta["not_measured_time_budget"].dump();
  const double clock_ghz = res.device.clock_mhz / 1000.0;
  for (const char* id : {"compute.fp32.fma", "compute.fp32.add", "compute.int32.add"}) {
    const Finding* f = res.find_finding(std::string(id) + ".throughput_gops");
    if (!f && std::string(id) != "compute.fp32.fma" && not_measured.find(id) != std::string::npos) continue;
    ASSERT_NE(f, nullptr) << id << "\n" << r.output;
    // One CPU core of the basic driver: more than 0.01 op/clk, fewer than
    // 64 (two AVX-512 FMA ports x 16 lanes x 2 chains' worth, generously).
    EXPECT_GT(number(*f), 0.01 * clock_ghz) << id;
    EXPECT_LT(number(*f), 64 * clock_ghz * res.device.compute_units) << id;
    EXPECT_NE(res.find_finding(std::string(id) + ".rate_vs_fp32_fma"), nullptr) << id;
  }
  const Finding* ratio = res.find_finding("compute.fp32.fma.rate_vs_fp32_fma");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ(number(*ratio), 1.0);

  const Series* lat_summary = res.find_series("oplatency.summary");
  ASSERT_NE(lat_summary, nullptr);
  const std::string lat_not_measured = lat_summary->meta["not_measured_time_budget"].dump();
  for (const char* id : {"compute.fp32.fma", "compute.fp32.div", "compute.int32.mul"}) {
    const Finding* ns = res.find_finding(std::string(id) + ".latency_ns");
    const std::string series = "oplatency" + std::string(id).substr(7);
    if (!ns && std::string(id) != "compute.fp32.fma" && lat_not_measured.find(series) != std::string::npos)
      continue;
    const Finding* cyc = res.find_finding(std::string(id) + ".latency_cycles");
    ASSERT_TRUE(ns && cyc) << id;
    EXPECT_GT(number(*ns), 0.05) << id;  // no op completes in a fraction of a cycle, dependent
    EXPECT_LT(number(*ns), 1000) << id;
    EXPECT_NE(cyc->note.find("uncertain"), std::string::npos) << "PoCL has no cycle counter: " << cyc->note;
  }
  if (not_measured.find("mix_fma_add") == std::string::npos)
    EXPECT_NE(res.find_finding("compute.dual_issue.fp32_fma_add"), nullptr);

  // Half precision: PoCL's CPU device has none (skip the check if a future one does).
  if (!res.device.features.fp16) {
    EXPECT_EQ(res.find_finding("compute.fp16.fma.throughput_gops"), nullptr);
    if (not_measured.find("fp16") != std::string::npos) return;
    ASSERT_FALSE(summary->meta["unsupported"].empty());
    const std::string reason = summary->meta["unsupported"][0]["reason"].get<std::string>();
    EXPECT_NE(reason.find("no half arithmetic"), std::string::npos) << reason;
  }
}

}  // namespace
}  // namespace gpuscope
