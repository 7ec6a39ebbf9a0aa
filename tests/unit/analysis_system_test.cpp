// The system probes' analysis (analysis/system) on made-up series whose
// answer is known: link rates, zero copy from map cost and kernel reads,
// launch overheads, atomics, resident work-groups, the clock estimate.
#include "analysis/analyze.hpp"
#include "analysis/system.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

Series series(const std::string& id, std::vector<std::pair<double, double>> xy) {
  Series s;
  s.id = id;
  s.probe = id.substr(0, id.find('.'));
  for (auto [x, y] : xy) s.points.push_back({x, y, {y * 0.99, y, y * 1.01}});
  return s;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

// Cost against size: a fixed part plus bytes over a rate (GB/s = bytes/ns).
std::vector<std::pair<double, double>> cost_curve(double fixed_us, double gbps) {
  std::vector<std::pair<double, double>> xy;
  for (double b = 4096; b <= 256 * MiB; b *= 4) xy.push_back({b, fixed_us + b / gbps / 1e3});
  return xy;
}

Results discrete_gpu() {
  Results r;
  r.device.type = "gpu";
  r.series.push_back(
      series("transfer.h2d.pinned", {{4096, 0.5}, {MiB, 15}, {64 * MiB, 24}, {1024 * MiB, 25}}));
  r.series.push_back(series("transfer.h2d.pageable", {{4096, 0.3}, {1024 * MiB, 9}}));
  r.series.push_back(series("transfer.d2h.pinned", {{4096, 0.4}, {1024 * MiB, 26}}));
  r.series.push_back(series("transfer.map.host.to_host", cost_curve(20, 20)));
  r.series.push_back(series("transfer.map.host.to_device", cost_curve(20, 20)));
  r.series.push_back(series("transfer.map.device.to_host", cost_curve(20, 20)));
  r.series.push_back(series("transfer.mapped.host.to_host", {{4096, 0.1}, {256 * MiB, 8}}));
  r.series.push_back(series("transfer.kernel_read", {{0, 3000}, {1, 2900}}));
  return r;
}

TEST(TransferAnalysis, LinkRatesAreTheBestPinnedRates) {
  const auto fs = analysis::transfer_findings(discrete_gpu());
  const Finding* h2d = find(fs, "host.h2d_gbps");
  const Finding* d2h = find(fs, "host.d2h_gbps");
  ASSERT_TRUE(h2d && d2h);
  EXPECT_DOUBLE_EQ(number(*h2d), 25);
  EXPECT_DOUBLE_EQ(number(*d2h), 26);
  EXPECT_GT(h2d->confidence, 0.8);
  EXPECT_NE(h2d->note.find("pageable 9.00"), std::string::npos) << h2d->note;
  ASSERT_TRUE(h2d->low && h2d->high);
  EXPECT_LT(*h2d->low, 25);
  EXPECT_GT(*h2d->high, 25);
  const Finding* map = find(fs, "host.map_gbps");
  ASSERT_NE(map, nullptr);
  EXPECT_DOUBLE_EQ(number(*map), 8);
}

TEST(TransferAnalysis, MapsThatCopyAreNotZeroCopy) {
  const auto fs = analysis::transfer_findings(discrete_gpu());
  const Finding* zc = find(fs, "host.zero_copy");
  ASSERT_NE(zc, nullptr);
  // Kernels read the buffer at device speed (NVIDIA keeps ALLOC_HOST_PTR
  // buffers in device memory) but every map copies it: not zero copy, and
  // the two kinds of evidence disagreeing lowers the confidence.
  EXPECT_FALSE(std::get<bool>(zc->value));
  EXPECT_LT(zc->confidence, 0.7);
  EXPECT_NE(zc->note.find("maps copy"), std::string::npos) << zc->note;
}

TEST(TransferAnalysis, FreeMapsAndInPlaceReadsAreZeroCopy) {
  Results r = discrete_gpu();
  for (auto& s : r.series)
    if (s.id.starts_with("transfer.map.")) s = series(s.id, cost_curve(30, 1e9));  // no copy
  const auto fs = analysis::transfer_findings(r);
  const Finding* zc = find(fs, "host.zero_copy");
  ASSERT_NE(zc, nullptr);
  EXPECT_TRUE(std::get<bool>(zc->value));
  EXPECT_GE(zc->confidence, 0.9);
  EXPECT_NE(zc->note.find("is free too"), std::string::npos) << zc->note;
}

TEST(TransferAnalysis, FreeMapsOverALinkAreNotZeroCopy) {
  Results r = discrete_gpu();
  for (auto& s : r.series) {
    if (s.id.starts_with("transfer.map.")) s = series(s.id, cost_curve(30, 1e9));
    if (s.id == "transfer.kernel_read") s = series(s.id, {{0, 3000}, {1, 25}});  // read across PCIe
  }
  const auto fs = analysis::transfer_findings(r);
  const Finding* zc = find(fs, "host.zero_copy");
  ASSERT_NE(zc, nullptr);
  EXPECT_FALSE(std::get<bool>(zc->value));
  EXPECT_NE(zc->note.find("across a link"), std::string::npos) << zc->note;
}

TEST(TransferAnalysis, SlopeOfCopyIsOneAndOfFixedCostZero) {
  const auto copy = analysis::loglog_slope(series("c", cost_curve(0.001, 10)), 64 * 1024);
  const auto fixed = analysis::loglog_slope(series("f", cost_curve(50, 1e12)), 64 * 1024);
  ASSERT_TRUE(copy && fixed);
  EXPECT_NEAR(*copy, 1.0, 0.01);
  EXPECT_NEAR(*fixed, 0.0, 0.01);
  EXPECT_FALSE(analysis::loglog_slope(series("s", {{1e6, 1}, {2e6, 2}}), 0));  // too few points
}

TEST(TransferAnalysis, NoSeriesNoFindings) { EXPECT_TRUE(analysis::transfer_findings(Results{}).empty()); }

TEST(TransferAnalysis, SvmMapThatCopiesIsReported) {
  Results r;
  Series svm = series("transfer.svm.map", cost_curve(10, 20));
  svm.meta = {{"coarse_grain_buffer", true},
              {"fine_grain_buffer", false},
              {"fine_grain_system", false},
              {"atomics", false}};
  r.series.push_back(svm);
  const auto fs = analysis::transfer_findings(r);
  const Finding* f = find(fs, "host.svm_map_copies");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(std::get<bool>(f->value));
  EXPECT_NE(f->note.find("coarse_grain_buffer"), std::string::npos);
}

TEST(LaunchAnalysis, DispatchAndRoundTripFromIsolatedLaunches) {
  Results r;
  r.series.push_back(series("launch.dispatch", {{1, 6.5}, {270000, 7.5}}));
  r.series.push_back(series("launch.roundtrip", {{1, 14}, {270000, 16}}));
  r.series.push_back(series("launch.back_to_back", {{4, 5}, {256, 2.5}}));
  r.series.push_back(series("launch.back_to_back_gap", {{4, 3}, {256, 1.2}}));
  const auto fs = analysis::launch_findings(r);
  ASSERT_TRUE(find(fs, "launch.dispatch_us") && find(fs, "launch.roundtrip_us") &&
              find(fs, "launch.back_to_back_us"));
  EXPECT_DOUBLE_EQ(number(*find(fs, "launch.dispatch_us")), 6.5);
  EXPECT_DOUBLE_EQ(number(*find(fs, "launch.roundtrip_us")), 14);
  EXPECT_DOUBLE_EQ(number(*find(fs, "launch.back_to_back_us")), 2.5);
  EXPECT_NE(find(fs, "launch.dispatch_us")->note.find("1.20 us"), std::string::npos);
}

TEST(AtomicsAnalysis, LatenciesAndThroughput) {
  Results r;
  r.series.push_back(series("atomics.ping_pong.global", {{32, 700}, {64, 720}}));
  r.series.push_back(series("atomics.ping_pong.local", {{32, 60}}));
  r.series.push_back(series("atomics.add.uncontended", {{32, 400}, {64, 200}}));
  r.series.push_back(series("atomics.add.contended", {{32, 4}}));
  const auto fs = analysis::atomics_findings(r);
  ASSERT_TRUE(find(fs, "atomics.global.latency_ns") && find(fs, "atomics.local.latency_ns"));
  EXPECT_DOUBLE_EQ(number(*find(fs, "atomics.global.latency_ns")), 700);
  EXPECT_DOUBLE_EQ(number(*find(fs, "atomics.local.latency_ns")), 60);
  const Finding* add = find(fs, "atomics.global.add_throughput_gops");
  ASSERT_NE(add, nullptr);
  EXPECT_DOUBLE_EQ(number(*add), 400);
  EXPECT_NE(add->note.find("100x slower"), std::string::npos) << add->note;
}

TEST(AtomicsAnalysis, NotMeasurablePingPongClaimsNoLatency) {
  Results r;
  Series g = series("atomics.ping_pong.global", {});
  g.meta["not_measurable"]["32"] = "no forward progress";
  r.series.push_back(g);
  r.series.push_back(series("atomics.ping_pong.local", {{64, 80}}));  // only 64-bit completed
  const auto fs = analysis::atomics_findings(r);
  EXPECT_EQ(find(fs, "atomics.global.latency_ns"), nullptr);
  const Finding* local = find(fs, "atomics.local.latency_ns");
  ASSERT_NE(local, nullptr);
  EXPECT_DOUBLE_EQ(number(*local), 80);
  EXPECT_NE(local->note.find("64-bit"), std::string::npos);
}

// Hopper: 2048 threads and 32 blocks per SM; 228 KiB of shared memory.
Results hopper_scheduling() {
  Results r;
  r.device.compute_units = 132;
  r.series.push_back(
      series("sched.by_wg_size", {{32, 32}, {64, 32}, {128, 16}, {256, 8}, {512, 4}, {1024, 2}}));
  r.series.push_back(series("sched.by_local_bytes", {{0, 32}, {16384, 13}, {48128, 4}}));
  r.series.back().meta["lower_bound_at"] = nlohmann::json::array();
  return r;
}

TEST(SchedulingAnalysis, HopperLimits) {
  const auto fs = analysis::scheduling_findings(hopper_scheduling());
  const Finding* most = find(fs, "sched.max_workgroups_per_cu");
  const Finding* one = find(fs, "sched.one_workgroup_per_cu");
  const Finding* items = find(fs, "sched.max_workitems_per_cu");
  ASSERT_TRUE(most && one && items);
  EXPECT_DOUBLE_EQ(number(*most), 32);
  EXPECT_FALSE(std::get<bool>(one->value));
  EXPECT_DOUBLE_EQ(number(*items), 2048);
  EXPECT_NE(most->note.find("1024: 2.00"), std::string::npos) << most->note;
}

TEST(SchedulingAnalysis, OneGroupPerUnitWithLocalMemory) {
  // A Bifrost-like device: several groups per core without local memory,
  // one per core as soon as a group uses local memory.
  Results r;
  r.device.compute_units = 4;
  r.series.push_back(series("sched.by_wg_size", {{64, 3}, {256, 2}}));
  r.series.push_back(series("sched.by_local_bytes", {{0, 3}, {4096, 1}, {16384, 1}}));
  const auto fs = analysis::scheduling_findings(r);
  EXPECT_DOUBLE_EQ(number(*find(fs, "sched.max_workgroups_per_cu")), 3);
  EXPECT_FALSE(std::get<bool>(find(fs, "sched.one_workgroup_per_cu")->value));
  EXPECT_NE(find(fs, "sched.one_workgroup_per_cu")->note.find("local memory ran one"), std::string::npos);
}

TEST(SchedulingAnalysis, AllResidentIsALowerBound) {
  Results r = hopper_scheduling();
  r.series[0].meta["lower_bound_at"] = nlohmann::json::array({32.0});
  const auto fs = analysis::scheduling_findings(r);
  const Finding* most = find(fs, "sched.max_workgroups_per_cu");
  ASSERT_NE(most, nullptr);
  EXPECT_FALSE(most->high.has_value());
  EXPECT_NE(most->note.find("lower bound"), std::string::npos);
}

TEST(SchedulingAnalysis, CpuRunningFewerGroupsThanUnits) {
  Results r;
  r.device.compute_units = 2;
  r.series.push_back(series("sched.by_wg_size", {{64, 0.5}, {256, 0.5}}));
  const auto fs = analysis::scheduling_findings(r);
  EXPECT_DOUBLE_EQ(number(*find(fs, "sched.max_workgroups_per_cu")), 1);
  EXPECT_TRUE(std::get<bool>(find(fs, "sched.one_workgroup_per_cu")->value));
}

TEST(ClockAnalysis, CountersGiveTheClockDirectly) {
  Results r;
  r.device.clock_mhz = 1980;
  Series c = series("clock.counters", {{1, 1755}});
  c.meta["cycles_per_step"] = 4.0;
  r.series.push_back(c);
  const auto fs = analysis::clock_findings(r);
  const Finding* f = find(fs, "device.measured_clock_mhz");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(number(*f), 1755);
  EXPECT_GE(f->confidence, 0.9);
  EXPECT_NE(f->note.find("88.6% of the reported 1980"), std::string::npos) << f->note;
}

TEST(ClockAnalysis, ChainReadAsWholeCycles) {
  Results r;
  r.device.clock_mhz = 2000;
  // 4 cycles at 1800 MHz: 2.222 ns per step, 4.44 cycles at the reported
  // 2000 MHz, read as 4 cycles -> 1800 MHz.
  r.series.push_back(series("clock.chain", {{1, 4 / 1.8}}));
  const auto fs = analysis::clock_findings(r);
  const Finding* f = find(fs, "device.measured_clock_mhz");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(number(*f), 1800, 1);
  EXPECT_LT(f->confidence, 0.6);
  ASSERT_TRUE(f->low && f->high);
  EXPECT_LT(*f->low, 1800);
  EXPECT_GT(*f->high, 1800);
  // A reading half-way between whole cycles carries no confidence.
  r.series[0] = series("clock.chain", {{1, 4.5 / 2.0}});
  const auto fs2 = analysis::clock_findings(r);
  ASSERT_NE(find(fs2, "device.measured_clock_mhz"), nullptr);
  EXPECT_LE(find(fs2, "device.measured_clock_mhz")->confidence, 0.1);
}

TEST(ClockAnalysis, VulkanCounterNamesItsMethod) {
  Results r;  // no reported clock: Vulkan reports none
  Series c = series("clock.counters", {{1, 1977}});
  c.meta["method"] = "the shader clock at subgroup scope (clockARB()): on NVIDIA the SM's cycle counter; its ticks "
                     "across the chain over the launch's device time (timestamp queries)";
  r.series.push_back(c);
  const Finding* f = find(analysis::clock_findings(r), "device.measured_clock_mhz");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(number(*f), 1977);
  EXPECT_NE(f->method.find("clockARB"), std::string::npos) << f->method;
  EXPECT_EQ(f->method.find("%globaltimer"), std::string::npos) << f->method;
}

TEST(ClockAnalysis, NoCounterAndNoReportedClockIsUnfoundWithTheReason) {
  Results r;
  Series chain = series("clock.chain", {{1, 2.0}});
  chain.meta["note"] = "the cycle counter (x) is not used: it is a timer counting ns, not a cycle counter";
  r.series.push_back(chain);
  const analysis::Analysis a = analysis::analyze_with_gaps(r);
  EXPECT_EQ(find(a.findings, "device.measured_clock_mhz"), nullptr);
  bool said = false;
  for (const auto& u : a.unfound)
    if (u.id == "device.measured_clock_mhz") said = u.reason.find("timer counting ns") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ClockAnalysis, LevelLatenciesInCyclesAtTheMeasuredClock) {
  Results r;
  r.device.clock_mhz = 1980;
  Finding clock = analysis::clock_findings([] {
    Results c;
    c.series.push_back(series("clock.counters", {{1, 2000}}));
    return c;
  }()).front();
  Finding l1;
  l1.id = "memory.L1.latency_ns";
  l1.value = 16.0;
  l1.unit = "ns";
  l1.confidence = 0.9;
  l1.low = 15.5;
  l1.high = 16.5;
  l1.evidence = {"latency.global"};
  Finding tlb = l1;
  tlb.id = "memory.tlb.miss_penalty_ns";
  const auto fs = analysis::level_cycle_findings(r, {l1, tlb, clock});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "memory.L1.latency_cycles");
  EXPECT_DOUBLE_EQ(number(fs[0]), 32.0);
  EXPECT_DOUBLE_EQ(*fs[0].low, 31.0);
  EXPECT_NE(fs[0].note.find("measured 2000 MHz"), std::string::npos) << fs[0].note;
  // Without a measured clock: the reported one, less sure; with neither: nothing.
  const auto reported = analysis::level_cycle_findings(r, {l1});
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NEAR(number(reported[0]), 31.68, 1e-9);
  EXPECT_LT(reported[0].confidence, 0.6);
  r.device.clock_mhz = 0;
  EXPECT_TRUE(analysis::level_cycle_findings(r, {l1}).empty());
}

TEST(LaunchAnalysis, CalibratedQueueingWidensTheIntervalByThePairingsDeviation) {
  Results r;
  Series d = series("launch.dispatch", {{1, 6.0}});
  d.meta["method"] = "calibrated timestamps: the host's submit call put on the device's clock";
  d.meta["calibration_deviation_us"] = 0.5;
  r.series.push_back(d);
  const Finding* f = find(analysis::launch_findings(r), "launch.dispatch_us");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(number(*f), 6.0);
  ASSERT_TRUE(f->low && f->high);
  EXPECT_NEAR(*f->low, 6.0 * 0.995 - 0.5, 1e-9);
  EXPECT_NEAR(*f->high, 6.0 * 1.005 + 0.5, 1e-9);
  EXPECT_NE(f->method.find("calibrated timestamps"), std::string::npos) << f->method;
  EXPECT_NE(f->note.find("0.5 us"), std::string::npos) << f->note;
}

TEST(SystemAnalysis, AnalyzeAllIncludesEveryFamily) {
  Results r = hopper_scheduling();
  r.device.clock_mhz = 1980;
  for (auto& s : discrete_gpu().series) r.series.push_back(s);
  r.series.push_back(series("launch.dispatch", {{1, 6}}));
  r.series.push_back(series("atomics.add.uncontended", {{32, 100}}));
  r.series.push_back(series("clock.chain", {{1, 2.02}}));
  const auto fs = analysis::analyze_all(r);
  for (const char* id :
       {"host.h2d_gbps", "host.zero_copy", "launch.dispatch_us", "atomics.global.add_throughput_gops",
        "sched.max_workgroups_per_cu", "device.measured_clock_mhz"})
    EXPECT_NE(find(fs, id), nullptr) << id;
}

}  // namespace
}  // namespace gpuscope
