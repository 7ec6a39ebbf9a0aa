// Probes' time budgets run on the device's budget clock: the sim's is its
// modelled time, so a sim run measures the same points whatever the load of
// the machine running it, and the same seed gives the same series.
#include "backends/sim/sim_device.hpp"
#include "harness/harness.hpp"
#include "probes/probe.hpp"
#include "support/recording_device.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

// Two cores of 40 ns L1 and a 256 KiB L2 (the sweep stops at 4 MiB): small
// enough that a whole latency probe takes well under a second of host time.
SimConfig small_gpu() {
  return parse_sim_config(nlohmann::json::parse(R"({
    "name": "budget-clock",
    "launch_overhead_us": 7,
    "core": {"shader_cores": 2, "units_per_core": 1, "lanes_per_unit": 16, "wave_width": 16,
             "waves_per_unit": 16, "register_file_bytes_per_unit": 32768, "register_alloc_granularity": 4,
             "max_registers_per_item": 64, "clock_mhz": 500, "workgroups_per_core": 2, "max_work_group_size": 256},
    "memory": {
      "caches": [
        {"name": "L1", "capacity_bytes": 16384, "line_bytes": 64, "associativity": 4, "replacement": "lru",
         "hit_latency_ns": 40, "bytes_per_clock": 16, "path": "both", "per_core": true},
        {"name": "L2", "capacity_bytes": 262144, "line_bytes": 64, "associativity": 8, "replacement": "lru",
         "hit_latency_ns": 120, "bytes_per_clock": 32, "path": "both"}],
      "dram": {"latency_ns": 400, "bandwidth_gbps": 10},
      "global_mem_bytes": 1073741824, "max_alloc_bytes": 4194304},
    "host": {"link_bandwidth_gbps": 4, "zero_copy": false},
    "noise": {"relative_sigma": 0.01, "outlier_probability": 0.02, "outlier_max_relative": 0.3}
  })"),
                          "test");
}

// A device that costs the host `delay` before every launch: a machine busy
// with other work, as the probe sees it.
class SlowHostDevice : public test::RecordingDevice {
 public:
  SlowHostDevice(Device& inner, std::chrono::microseconds delay) : RecordingDevice(inner), delay_(delay) {}
  using Device::launch;
  double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) override {
    std::this_thread::sleep_for(delay_);
    return RecordingDevice::launch(k, shape, args);
  }

 private:
  std::chrono::microseconds delay_;
};

Series run_latency(Device& dev, double budget_s) {
  ProbeOptions opts;
  opts.harness.target_launch_ms = 1;  // short launches: host time of the sim's chase is what costs here
  ProbeContext ctx{dev, opts, budget_s};
  return run_latency_probe(ctx).at(0);
}

}  // namespace

TEST(BudgetClock, TimeBudgetRunsOnTheClockItIsGiven) {
  double now = 100;
  const TimeBudget b(2.5, [&] { return now; });
  EXPECT_DOUBLE_EQ(b.elapsed_s(), 0);
  now = 101;
  EXPECT_DOUBLE_EQ(b.remaining_s(), 1.5);
  EXPECT_FALSE(b.exhausted());
  now = 102.5;
  EXPECT_TRUE(b.exhausted());
  EXPECT_DOUBLE_EQ(b.total_s(), 2.5);
}

TEST(BudgetClock, SimClockCountsModelledTimeNotHostTime) {
  SimDevice dev(small_gpu(), "sim:budget-clock");
  EXPECT_DOUBLE_EQ(dev.budget_clock_s(), 0);

  // A copy: its bytes across the 4 GB/s link plus the 7 us overhead.
  auto buf = dev.create_buffer(4096);
  const std::vector<uint32_t> words(1024, 1);
  dev.write_values<uint32_t>(*buf, words);
  const double after_write = dev.budget_clock_s();
  EXPECT_NEAR(after_write, (4096.0 / 4 + 7e3) * 1e-9, 1e-15);

  // Host time passing is not device time.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_DOUBLE_EQ(dev.budget_clock_s(), after_write);

  // A launch: its (noisy) kernel time plus the overhead.
  Kernel& k = dev.kernel({"launch", "empty", {}});
  const KernelArg args[] = {buf.get(), uint32_t{5}};
  const double ns = dev.launch(k, Range::d1(64), Range::d1(64), args);
  EXPECT_NEAR(dev.budget_clock_s() - after_write, (ns + 7e3) * 1e-9, 1e-15);

  // A batch: its host time.
  const double before_batch = dev.budget_clock_s();
  const LaunchBatch b = dev.launch_batch(k, LaunchShape{Range::d1(64), Range::d1(64)}, args, 4);
  EXPECT_NEAR(dev.budget_clock_s() - before_batch, b.host_ns * 1e-9, 1e-15);

  // A probe's budget, through its context, runs on that clock.
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 1e-3};
  const TimeBudget budget = ctx.budget();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(budget.exhausted());
  dev.launch(k, Range::d1(64), Range::d1(64), args);
  EXPECT_GT(budget.elapsed_s(), 0);
}

// The same description run twice, once with the host slowed by 2 ms a
// launch (what a loaded machine does to the probe), gives the same series:
// the same footprints, samples and budget spent. The budget is small enough
// to stop the refinement, so a budget counted in wall time would stop it
// earlier in the slowed run.
TEST(BudgetClock, LatencySeriesDoesNotDependOnHostLoad) {
  constexpr double kBudget = 0.15;  // modelled s: a few refinement points past the coarse sweep
  SimDevice quiet_dev(small_gpu(), "sim:budget-clock");
  const Series quiet = run_latency(quiet_dev, kBudget);

  SimDevice slow_inner(small_gpu(), "sim:budget-clock");
  SlowHostDevice slow_dev(slow_inner, std::chrono::microseconds(2000));
  const auto t0 = std::chrono::steady_clock::now();
  const Series slow = run_latency(slow_dev, kBudget);
  const double slow_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The budget bound: the refinement stopped on it, not for want of steps.
  EXPECT_GE(quiet.meta.at("wall_s").get<double>(), kBudget);
  // And the slowed run took longer in wall time than the budget allowed.
  EXPECT_GT(slow_wall_s, kBudget);

  ASSERT_EQ(quiet.points.size(), slow.points.size());
  for (size_t i = 0; i < quiet.points.size(); ++i) {
    EXPECT_EQ(quiet.points[i].x, slow.points[i].x) << i;
    EXPECT_EQ(quiet.points[i].samples, slow.points[i].samples) << i;
  }
  EXPECT_EQ(quiet.meta.at("wall_s").get<double>(), slow.meta.at("wall_s").get<double>());
}
