// The whole default runs of one H200 through OpenCL and through Vulkan in
// one machine session, with results saved beside the probes
// (tests/data/h200/full_run_*_saved_beside.json): the Vulkan issue's
// targets on the H200, every probe's time accounted for, and the latency
// probe's warm-up past its cap shown to matter
// (h200/latency_part_warm_skipped.json); and the same machine kind's runs
// with the latency probe's cycles walked whole by chains
// (tests/data/h200/full_run_*_chain_warm.json); and the run records of
// whole Vulkan runs on an H200 and an H100 with every known kernel built
// ahead (tests/data/<gpu>/vulkan_run_times_all_built_ahead.json), with the
// latency curve of the H200's (h200/latency_vulkan_timed_after_warm_walk.json).
#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

namespace gpuscope {
namespace {

using test::finding_value;

class H200WholeRuns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    opencl_ = new Results(load_recorded("h200/full_run_opencl_saved_beside.json"));
    vulkan_ = new Results(load_recorded("h200/full_run_vulkan_saved_beside.json"));
  }
  static void TearDownTestSuite() {
    delete opencl_;
    delete vulkan_;
  }
  static Results* opencl_;
  static Results* vulkan_;
};
Results* H200WholeRuns::opencl_ = nullptr;
Results* H200WholeRuns::vulkan_ = nullptr;

TEST_F(H200WholeRuns, AreOneGpuWithEveryProbeRun) {
  EXPECT_FALSE(vulkan_->device.uuid.empty());
  EXPECT_EQ(opencl_->device.uuid, vulkan_->device.uuid);
  EXPECT_TRUE(vulkan_->skipped.empty()) << vulkan_->skipped.front().probe << ": " << vulkan_->skipped.front().reason;
}

TEST_F(H200WholeRuns, RatesTheHardwareSetsAgreeWithinThreePercent) {
  for (const char* id : {"compute.fp32.fma.throughput_gops", "memory.dram.bandwidth_gbps", "local.bandwidth_gbps"}) {
    const double cl = finding_value(*opencl_, id), vk = finding_value(*vulkan_, id);
    EXPECT_NEAR(vk / cl, 1.0, 0.03) << id << ": OpenCL " << cl << ", Vulkan " << vk;
  }
  EXPECT_NEAR(finding_value(*vulkan_, "memory.L1.latency_cycles"), 32, 3.2);
}

// 66.1% (f16) and 66.0% (i8) of the published dense peaks (989.4 TFLOP/s,
// 1979 TOP/s; an op there is a multiply or an add, here a multiply-add).
TEST_F(H200WholeRuns, MatrixEngineReachesTwoThirdsOfItsDensePeakWithinAPercent) {
  EXPECT_GE(finding_value(*vulkan_, "compute.matrix.f16xf16->f32.16x16x16.throughput_gops") * 2 / 989.4e3, 0.655);
  EXPECT_GE(finding_value(*vulkan_, "compute.matrix.i8xi8->i32.16x16x32.throughput_gops") * 2 / 1979e3, 0.655);
}

// Every probe records its wall, build and save times; saved beside the next
// probe, the saves cost the run a copy of its results each (0.12 s in all,
// where analysing in line after each probe had cost 5.0 s).
TEST_F(H200WholeRuns, SavesBesideTheProbesCostTheRunLittle) {
  for (const Results* r : {opencl_, vulkan_}) {
    double saves = 0, probes = 0;
    for (const auto& [name, times] : r->run.at("probes").items()) {
      ASSERT_TRUE(times.contains("save_s")) << name;
      saves += times.at("save_s").get<double>();
      probes += times.at("wall_s").get<double>();
    }
    EXPECT_LT(saves, 0.01 * probes) << saves << " s of saves against " << probes << " s of probes";
  }
}

// Past the last level, a point laid out and timed without the part-walk
// reads fast by the share of its cycle the layout left cached; part-walked,
// the same footprints read DRAM's latency.
TEST(H200LatencyWarmUp, PartWalkPastTheCapEvictsTheLayoutsLeftovers) {
  const Results skipped = load_recorded("h200/latency_part_warm_skipped.json");
  const Results walked = load_recorded("h200/full_run_vulkan_saved_beside.json");
  const auto curve = [](const Results& r) {
    std::map<double, double> out;
    for (const Point& p : r.find_series("latency.global")->points) out[p.x] = p.y;
    return out;
  };
  const auto unwarmed = curve(skipped), warmed = curve(walked);
  const double dram = finding_value(walked, "memory.dram.latency_ns");
  int compared = 0;
  for (const auto& [x, y] : unwarmed) {
    if (x < 100e6 || x > 300e6) continue;  // past the 60 MiB L2, where a third or more of the cycle fits it
    EXPECT_LT(y, 0.98 * dram) << x << " B unwarmed";
    if (const auto w = warmed.find(x); w != warmed.end()) EXPECT_NEAR(w->second / dram, 1.0, 0.01) << x << " B";
    ++compared;
  }
  EXPECT_GE(compared, 2);
}

// Walked by chains region after region (src/probes/latency.cpp,
// warm_in_chains), every point's cycle was walked whole before timing, in
// 1.3 s of the Vulkan run's latency probe where the serial walks and part
// walks had taken 7.7 s, and the curve is the serial walk's: the L2's near
// and far halves and DRAM within 2.5% of the earlier run on another H200,
// except on the far half's steep end (69.8 MiB: 4.8% faster).
TEST(H200LatencyWarmUp, ChainsWalkEveryCycleWholeAndReadTheSerialWalksCurve) {
  const Results chains = load_recorded("h200/full_run_vulkan_chain_warm.json");
  const Results serial = load_recorded("h200/full_run_vulkan_saved_beside.json");
  const Series* s = chains.find_series("latency.global");
  ASSERT_NE(s, nullptr);
  double warm_ms = 0;
  int chained = 0;
  for (const auto& d : s->meta.at("detail")) {
    EXPECT_EQ(d.at("warm_fraction").get<double>(), 1.0) << d.at("x");
    warm_ms += d.at("wall_ms").at("warm").get<double>();
    if (d.at("warm_chains").get<int>() > 0) ++chained;
  }
  EXPECT_GE(chained, 20);
  EXPECT_LT(warm_ms, 1500);

  std::map<double, double> before;
  for (const Point& p : serial.find_series("latency.global")->points) before[p.x] = p.y;
  int compared = 0;
  for (const Point& p : s->points) {
    const auto b = before.find(p.x);
    if (b == before.end() || p.x < 1e6) continue;
    const bool steep_end = p.x > 68 * 1048576.0 && p.x < 72 * 1048576.0;
    EXPECT_NEAR(p.y / b->second, 1.0, steep_end ? 0.05 : 0.03) << p.x << " B";
    ++compared;
  }
  EXPECT_GE(compared, 30);
  EXPECT_NEAR(finding_value(chains, "memory.L2.latency_ns") / finding_value(serial, "memory.L2.latency_ns"), 1, 0.01);
  EXPECT_NEAR(finding_value(chains, "memory.dram.latency_ns") / finding_value(serial, "memory.dram.latency_ns"), 1, 0.01);
}

// The whole Vulkan run with the chain warm-up, the matrix builds ahead and
// the sweep ending at 1 GiB: the latency probe 8.8 s (15.6 before), every
// probe run, and the rates the hardware sets within 3% of OpenCL's on the
// same GPU.
TEST(H200ChainWarmRuns, LatencyProbeTakesUnderTenSecondsAndTheApisAgree) {
  const Results vk = load_recorded("h200/full_run_vulkan_chain_warm.json");
  const Results cl = load_recorded("h200/full_run_opencl_chain_warm.json");
  EXPECT_EQ(vk.device.uuid, cl.device.uuid);
  EXPECT_TRUE(vk.skipped.empty());
  EXPECT_LT(vk.run.at("probes").at("latency").at("wall_s").get<double>(), 10);
  EXPECT_LT(vk.run.at("probes").at("matrix").at("build_s").get<double>(), 0.5);
  for (const char* id : {"compute.fp32.fma.throughput_gops", "memory.dram.bandwidth_gbps", "local.bandwidth_gbps"})
    EXPECT_NEAR(finding_value(vk, id) / finding_value(cl, id), 1.0, 0.03) << id;
  EXPECT_NEAR(finding_value(vk, "memory.L1.latency_cycles"), 32, 3.2);
  EXPECT_EQ(vk.find_series("latency.global")->meta.at("max_footprint_bytes").get<double>(), 1073741824.0);
}

// The latency probe on GPUs lays its cycles out on every host core and
// times each point without the harness's warm-up launch (the warm walk has
// just walked the cycle): on an H200 its cycle set-up fell from 1.86 s to
// 0.87 s and its timed launches from 5.2 s to 4.5 s, and the curve is the
// chain-warm run's within 3.5% at every footprint of 1 MiB on (that run was
// on another H200, whose DRAM read 337 ns against this one's 347.5 in both
// of its runs), with the same capacities read.
TEST(H200LatencyTimedAfterWarmWalk, TakesLessTimeAndReadsTheSameCurve) {
  const Results now = load_recorded("h200/latency_vulkan_timed_after_warm_walk.json");
  const Results before = load_recorded("h200/full_run_vulkan_chain_warm.json");
  const auto wall = [](const Series& s, const char* part) {
    double ms = 0;
    for (const auto& d : s.meta.at("detail")) ms += d.at("wall_ms").at(part).get<double>();
    return ms;
  };
  const Series* s = now.find_series("latency.global");
  const Series* b = before.find_series("latency.global");
  ASSERT_TRUE(s && b);
  EXPECT_LT(wall(*s, "setup"), 0.6 * wall(*b, "setup"));
  EXPECT_LT(wall(*s, "timed"), 0.9 * wall(*b, "timed"));
  std::map<double, double> earlier;
  for (const Point& p : b->points) earlier[p.x] = p.y;
  int compared = 0;
  for (const Point& p : s->points) {
    const auto e = earlier.find(p.x);
    if (e == earlier.end() || p.x < 1048576) continue;
    EXPECT_NEAR(p.y / e->second, 1.0, 0.035) << p.x << " B";
    ++compared;
  }
  EXPECT_GE(compared, 25);
  for (const char* id : {"memory.L1.capacity_bytes", "memory.L2.capacity_bytes", "memory.L1.latency_ns"})
    EXPECT_NEAR(finding_value(now, id) / finding_value(before, id), 1.0, 0.01) << id;
}

// Whole Vulkan runs with the bandwidth, compute, oplatency and lbm kernels
// built ahead as well, and icache's bisection bodies three steps at once:
// on a fresh machine the probes waited 1.9 s for builds on an H200 and 2.1 s
// on an H100, and the H200's probes took 57.9 s in all. The H100's took 60.9 s: the 60 s is
// missed there (docs/opencl-vs-vulkan.md says where the time goes).
TEST(WholeVulkanRunTimes, KernelsBuiltAheadLeaveLittleToWaitFor) {
  for (const char* gpu : {"h200", "h100"}) {
    std::ifstream in(recorded_path(std::string(gpu) + "/vulkan_run_times_all_built_ahead.json"));
    const nlohmann::json runs = nlohmann::json::parse(in);
    ASSERT_EQ(runs.size(), 2u) << gpu;
    const nlohmann::json& cold = runs[0].at("run");
    double wall = 0, waited = 0;
    for (const auto& [name, p] : cold.at("probes").items()) {
      wall += p.at("wall_s").get<double>();
      waited += p.at("build_s").get<double>();
    }
    EXPECT_LT(waited, 2.2) << gpu;
    EXPECT_GT(cold.at("build_ahead_s").get<double>(), 2.5) << gpu;
    for (const char* probe : {"bandwidth", "compute", "oplatency", "icache"})
      EXPECT_LT(cold.at("probes").at(probe).at("build_s").get<double>(), 0.35) << gpu << " " << probe;
    if (std::string(gpu) == "h200") EXPECT_LT(wall, 60) << gpu;
    EXPECT_TRUE(runs[0].at("skipped").empty()) << gpu;
  }
}

}  // namespace
}  // namespace gpuscope
