// The OpenCL backend and the real latency probe on the CPU through PoCL, the
// one device every CI machine has.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"
#include "support/latency_run.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

// The whole latency probe through the command line on PoCL's CPU device:
// it runs, its chase checks out (the run exits 0), and the curve and the
// findings read from it are complete. The sizes it reads move with what the
// host's co-tenants hold of its caches: bench/pocl_caches.sh reports them
// beside Linux's and the host's own chase; tests/recorded/
// latency_curves_test.cpp holds the analysis of curves recorded on PoCL.
TEST(LatencyProbeOnPocl, RunsAndReadsItsCurve) {
  const auto dir = test::fresh_temp_dir("pocl_latency");
  // PoCL's basic driver runs the kernel on the calling thread; its pthread
  // driver keeps runtime threads busy beside the kernel.
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --quick --probes latency --device " + cpu_device_id() + " --out " + dir.string(),
      "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << (res.skipped.empty() ? "" : res.skipped.front().reason);
  // --quick's coarse sweep, one point an octave from 1 KiB to a CPU's
  // planned footprint (64 MiB at least), always runs whole: 17 points. The
  // refinement beyond it spends a time budget the host's load decides.
  test::expect_latency_run(res, 17, 3);
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
