// The OpenCL backend and the real latency probe on the CPU through PoCL, the
// one device every CI machine has.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"
#include "support/host_chase_reading.hpp"
#include "support/sysfs_caches.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

namespace gpuscope {
namespace {

TEST(OpenClBackend, DescribesTheCpuDevice) {
  const auto devices = enumerate_devices();
  ASSERT_FALSE(devices.empty()) << "no OpenCL device: is pocl-opencl-icd installed?";
  const std::string id = cpu_device_id();
  ASSERT_FALSE(id.empty());
  auto dev = open_device(id);
  const auto& info = dev->info();
  EXPECT_EQ(info.id, id);
  EXPECT_EQ(info.type, "cpu");
  EXPECT_GE(info.compute_units, 1u);
  EXPECT_GT(info.global_mem_bytes, 0u);
  EXPECT_GT(info.max_alloc_bytes, 0u);
  EXPECT_TRUE(info.address_bits == 32 || info.address_bits == 64);
  EXPECT_FALSE(info.extensions.empty());
  EXPECT_TRUE(info.profiling);
}

TEST(OpenClBackend, DefaultDeviceIsFirstGpuElseFirstDevice) {
  auto dev = open_device("");
  const auto devices = enumerate_devices();
  const auto gpu = std::find_if(devices.begin(), devices.end(), [](auto& d) { return d.type == "gpu"; });
  EXPECT_EQ(dev->info().id, gpu != devices.end() ? gpu->id : devices.front().id);
}

TEST(OpenClBackend, BufferRoundTripAndProfiledLaunch) {
  auto dev = open_device(cpu_device_id());
  std::vector<uint32_t> next(1024);
  std::iota(next.begin(), next.end(), 1u);
  next.back() = 0;  // a single cycle 0 -> 1 -> ... -> 1023 -> 0
  auto slots = dev->create_buffer(next.size() * 64);
  auto idx = dev->create_buffer(next.size() * sizeof(uint32_t));
  auto end = dev->create_buffer(sizeof(uint32_t));
  dev->write_values<uint32_t>(*idx, next);
  EXPECT_EQ(dev->read_values<uint32_t>(*idx, next.size()), next);

  const std::map<std::string, KernelParam> bits = {{"addr_bits", dev->info().address_bits}};
  auto& link = dev->kernel({"latency", "link", bits});
  auto& chase = dev->kernel({"latency", "chase", bits});
  const uint32_t stride_words = 64 / (dev->info().address_bits / 8);
  const KernelArg link_args[] = {slots.get(), idx.get(), stride_words, uint32_t{1024}};
  dev->launch(link, Range::d1(1024), Range::d1(0), link_args);
  const KernelArg chase_args[] = {slots.get(), uint32_t{5}, stride_words, uint32_t{10}, end.get()};
  const double ns = dev->launch(chase, Range::d1(1), Range::d1(1), chase_args);
  EXPECT_GT(ns, 0);
  EXPECT_EQ(dev->read_values<uint32_t>(*end, 1)[0], 5u + 160u);  // 10 rounds of 16 hops
}

TEST(OpenClBackend, BuildFailureCarriesTheBuildLog) {
  auto dev = open_device(cpu_device_id());
  try {
    // bandwidth.cl stops with #error for a vector width it has no type for.
    dev->kernel({"bandwidth", "read", {{"vec", 3}, {"unroll", 4}}});
    FAIL() << "a broken kernel built";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("opencl/bandwidth.cl"), std::string::npos);
    EXPECT_FALSE(e.log.empty());
    EXPECT_NE(e.log.find("error"), std::string::npos) << e.log;
  }
}

TEST(OpenClBackend, RefusedAllocationIsOutOfResources) {
  auto dev = open_device(cpu_device_id());
  EXPECT_THROW(dev->create_buffer(dev->info().max_alloc_bytes + 1), OutOfResources);
}

// The whole latency probe through the command line, checked against what
// Linux says the CPU's L1d and L2 are.
TEST(LatencyProbeOnPocl, FindsTheCpuL1AndL2) {
  const auto sys = test::sysfs_data_caches();
  ASSERT_TRUE(sys.count(1) && sys.count(2)) << "no cache sizes in /sys";
  const auto within = [](double got, double want, double tolerance) {
    return std::abs(got - want) <= tolerance * want;
  };

  // The CI VM shares its core's L1 and L2 with other tenants, and a run
  // disturbed from start to end can lose a level (seen about one run in ten:
  // the L3 plateau read as a ramp). The L2 is held to 35%, the L1 to 25%:
  // on a Zen 2/3 VM (2026-11-24: 512 KiB 8-way L2, 4 KiB pages) the curve
  // climbs from 256 KiB, where 64 first-level TLB entries run out, and the
  // half-hit reading of the L2's end came out at 640-690 KiB in five of
  // seven runs and 341-348 KiB (the climb split into two levels) in two,
  // with the analysis of the day before as well. The exact recovery of
  // capacities is tested on the sim and on recorded curves. On an Emerald
  // Rapids VM (48 KiB L1, 2 MiB L2) the L2 climbs from 0.4 MiB, on 2 MiB
  // pages too, and while other tenants held more of the L3 (the VM's share
  // 6 MiB, not 9) that climb read as a level of its own in 8 of 9 attempts
  // (0.44-0.60 MiB). So each attempt also reads the host's own chase over
  // the same footprints (tests/support/host_chase_reading.hpp); where that
  // misses Linux's L2 as well, the device's L2 is held to the host's: what
  // this test asks is that the PoCL path shows the caches the host shows.
  // Up to three runs are allowed; every run's readings are printed, and the
  // last must pass every check.
  constexpr int kAttempts = 3;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const auto dir = test::fresh_temp_dir("pocl_latency_" + std::to_string(attempt));
    // PoCL's basic driver runs the kernel on the calling thread. Its pthread
    // driver keeps runtime threads busy beside the kernel, and on VMs whose
    // vCPUs are unannounced hyperthreads of one core they share the chase's
    // L1 (see tests/data/README.md): the cache would read a quarter its size.
    const auto r = test::run_gpuscope(
        "run --quiet --no-replay --probes latency --device " + cpu_device_id() + " --out " + dir.string(),
        "POCL_DEVICES=basic");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Results res = read_results_file((dir / "results.json").string());
    const Finding* l1 = res.find_finding("memory.L1.capacity_bytes");
    const Finding* l2 = res.find_finding("memory.L2.capacity_bytes");
    // PoCL's buffers are on transparent huge pages (opencl_detail::HostMemory).
    const Results native = test::native_reading(res, host_chase::Pages::kHuge);
    const Finding* host_l2 = native.find_finding("memory.L2.capacity_bytes");
    std::cerr << "attempt " << attempt << ": L1 " << (l1 ? number(*l1) : -1) << " B (Linux: " << sys.at(1)
              << "), L2 " << (l2 ? number(*l2) : -1) << " B (Linux: " << sys.at(2)
              << ", the host's own chase: " << (host_l2 ? number(*host_l2) : -1) << ")\n";
    // The L2 as Linux gives it, or, where the host's own chase read by the
    // same analysis misses Linux's too, as the host shows it now.
    const bool l2_as_host = l2 && host_l2 && !within(number(*host_l2), sys.at(2), 0.35) &&
                            within(number(*l2), number(*host_l2), 0.35);
    const bool l2_right = l2 && (within(number(*l2), sys.at(2), 0.35) || l2_as_host);
    const bool passed = l1 && l2 && within(number(*l1), sys.at(1), 0.25) && l2_right;
    if (attempt < kAttempts && !passed) continue;

    const Series* s = res.find_series("latency.global");
    ASSERT_NE(s, nullptr);
    EXPECT_GE(s->points.size(), 20u);
    for (const auto& p : s->points) {
      EXPECT_GE(p.samples.size(), 3u);
      EXPECT_GT(p.y, 0);
    }
    ASSERT_NE(l1, nullptr) << r.output;
    ASSERT_NE(l2, nullptr) << r.output;
    EXPECT_NEAR(number(*l1), sys.at(1), 0.25 * sys.at(1)) << r.output;
    EXPECT_TRUE(l2_right) << "L2 " << number(*l2) << " B: not within 35% of Linux's " << sys.at(2)
                          << " B, nor of the host's own chase where that misses Linux's too\n"
                          << r.output;
    const Finding* lat1 = res.find_finding("memory.L1.latency_ns");
    const Finding* lat2 = res.find_finding("memory.L2.latency_ns");
    ASSERT_TRUE(lat1 && lat2);
    EXPECT_LT(number(*lat1), number(*lat2));
    return;
  }
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// A run killed half-way (SIGKILL: no handler, no flush) leaves a complete
// results.json with what had finished: here the device, before any probe did.
TEST(RunOnPocl, KilledRunLeavesAValidResultsFile) {
  const auto dir = test::fresh_temp_dir("killed_run");
  const std::string cmd = "timeout -s KILL 2 " + std::string(GPUSCOPE_BINARY) +
                          " run -q --probes latency --device " + cpu_device_id() + " --out " + dir.string() +
                          " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_EQ(WEXITSTATUS(status), 137) << "the run finished before it could be killed";
  const Results r = read_results_file((dir / "results.json").string());
  EXPECT_EQ(r.device.id, cpu_device_id());
  EXPECT_TRUE(r.series.empty());
  EXPECT_NE(r.find_finding("device.compute_units"), nullptr);
}

}  // namespace
}  // namespace gpuscope
