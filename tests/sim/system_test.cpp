// Recovery tests of the sim's system families (atomics.cl, clock.cl and the
// launch timestamps of SimDevice::launch_batch): the atomics, clock and
// launch probes run end to end on every preset, and the analysis must
// recover what the description put in (issue 7). Expected values are read
// from the description by its own meaning, not from the families' code.
#include "analysis/system.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/probe.hpp"

#include "support/sim_configs.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <variant>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

void expect_recovered(const std::string& preset, const std::string& what, double configured, double recovered,
                      double tolerance) {
  std::printf("system %s: %s configured %.4g, recovered %.4g\n", preset.c_str(), what.c_str(), configured,
              recovered);
  EXPECT_NEAR(recovered / configured, 1.0, tolerance) << what;
}

}  // namespace

class SimSystemRecovery : public testing::TestWithParam<std::string> {};

// Atomic hand-off latencies within 5%; uncontended add throughput within 5%
// of global_adds_per_clock x the clock.
TEST_P(SimSystemRecovery, Atomics) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto fs = analysis::atomics_findings(test::run_sim_probe(dev, run_atomics_probe, false));
  expect_recovered(c.id_name, "atomics.global.latency_ns", c.atomics.global_latency_ns,
                   test::finding_value(fs, "atomics.global.latency_ns"), 0.05);
  expect_recovered(c.id_name, "atomics.local.latency_ns", c.atomics.local_latency_ns,
                   test::finding_value(fs, "atomics.local.latency_ns"), 0.05);
  expect_recovered(c.id_name, "atomics.global.add_throughput_gops",
                   c.atomics.global_adds_per_clock * c.clock_ghz(),
                   test::finding_value(fs, "atomics.global.add_throughput_gops"), 0.05);
}

// The running clock from the dependent chain's time per step within 2%.
TEST_P(SimSystemRecovery, MeasuredClock) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto fs = analysis::clock_findings(test::run_sim_probe(dev, run_clock_probe, false));
  expect_recovered(c.id_name, "device.measured_clock_mhz", c.core.clock_mhz,
                   test::finding_value(fs, "device.measured_clock_mhz"), 0.02);
}

// Dispatch (queued->start), the host's round trip of an isolated launch and
// the host's cost per launch back to back, each within 5%. The round trip is
// the host's cost (launch_overhead_us) plus the empty kernel's own run, one
// round of one DRAM write latency (family_launch.cpp): 2-3% of the presets'
// 12-40 us, 16% of a drawn GPU's default 5 us.
TEST_P(SimSystemRecovery, Launch) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto fs = analysis::launch_findings(test::run_sim_probe(dev, run_launch_probe, false));
  expect_recovered(c.id_name, "launch.dispatch_us", c.launch.dispatch_us, test::finding_value(fs, "launch.dispatch_us"),
                   0.05);
  expect_recovered(c.id_name, "launch.roundtrip_us", c.launch_overhead_us + c.dram_latency_ns / 1e3,
                   test::finding_value(fs, "launch.roundtrip_us"), 0.05);
  expect_recovered(c.id_name, "launch.back_to_back_us", c.launch.back_to_back_us,
                   test::finding_value(fs, "launch.back_to_back_us"), 0.05);
}

INSTANTIATE_TEST_SUITE_P(Presets, SimSystemRecovery, testing::ValuesIn(test::kSimPresets), test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, SimSystemRecovery, testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);

// The kernels' results where the probes do not look: a local ping-pong with
// no partner in the group runs player 0 alone (one move, then spins to the
// cap), and 32-bit contended adds wrap as the counter does.
TEST(SimSystemKernels, LonePlayerAndWrappingAdds) {
  SimDevice dev(load_sim_preset("mali-g52"), "sim:mali-g52");
  auto result = dev.create_buffer(4 * sizeof(uint32_t));
  dev.write_values<uint32_t>(*result, std::vector<uint32_t>{7, 7, 7, 7});
  Kernel& local = dev.kernel({"atomics", "ping_pong_local", {{"use_64", false}}});
  const uint32_t rounds = 10, cap = 1000;
  const KernelArg pp[] = {rounds, uint32_t{64}, cap, result.get()};  // partner 64: outside
  dev.launch(local, {Range::d1(32), Range::d1(32), 8}, pp);
  EXPECT_EQ(dev.read_values<uint32_t>(*result, 4), (std::vector<uint32_t>{1, 7, cap, 7}));

  Kernel& add = dev.kernel({"atomics", "add_throughput", {{"use_64", false}}});
  auto words = dev.create_buffer(64 * sizeof(uint32_t));
  // 64 x (2^26 + 1) adds pass 2^32 once: about 43 s of modelled time, which
  // the launch bound allows only at its ceiling (--max-launch-ms 10000 plans).
  dev.set_launch_bound(LaunchBound{10000});
  const uint32_t iters = 0x0400'0001u;
  const KernelArg a[] = {words.get(), iters, uint32_t{1}};
  dev.launch(add, Range::d1(64), Range::d1(32), a);
  EXPECT_EQ(dev.read_values<uint32_t>(*words, 2),
            (std::vector<uint32_t>{static_cast<uint32_t>(64ull * iters), 0}));
}

// A kernel longer than the back-to-back gap: the next launch of an in-order
// queue starts when it ends, not a gap after the previous start.
TEST(SimSystemKernels, BatchWaitsForLongKernels) {
  const SimConfig c = load_sim_preset("mali-g52");
  SimDevice dev(c, "sim:mali-g52");
  Kernel& k = dev.kernel({"clock", "chain", {{"counters", false}}});
  auto out = dev.create_buffer(3 * sizeof(uint64_t));
  const KernelArg args[] = {out.get(), uint32_t{100000}, uint32_t{1}};  // 1.6M steps: ms, not us
  const LaunchBatch b = dev.launch_batch(k, {Range::d1(1), Range::d1(1)}, args, 3);
  ASSERT_EQ(b.events.size(), 3u);
  for (size_t i = 1; i < b.events.size(); ++i) {
    EXPECT_GT(b.events[i - 1].end_ns - b.events[i - 1].start_ns, 100 * c.launch.back_to_back_us * 1e3);
    EXPECT_EQ(b.events[i].start_ns, b.events[i - 1].end_ns);
  }
  EXPECT_GT(b.host_ns, b.events.back().end_ns - b.events.front().start_ns);
}
