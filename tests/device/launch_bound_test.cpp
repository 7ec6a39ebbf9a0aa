// backends/launch_bound.hpp on the real backends: a launch that runs for
// hours (sustain.cl's fma chains at the most rounds the device takes, over
// millions of work-items) is cut at its bound as a device fault. It is
// still running after the grace, so the device is lost: every later call
// says so at once, and closing the device returns (it abandons what the
// launch may use instead of waiting for it or freeing it).
#include "backends/backend.hpp"
#include "core/error.hpp"
#include "probes/loop_trips.hpp"

#include "support/devices.hpp"
#include "support/vulkan_device.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <sstream>

namespace gpuscope {
namespace {

// Seconds past the bound and its grace the host may take to notice (a
// loaded 2-core VM): the bound itself is what is tested.
constexpr double kNoticeSlackS = 10;

void expect_endless_launch_is_cut(const std::string& id) {
  auto dev = open_device(id);
  // Any plan under the floor waits the floor.
  dev->set_launch_bound(LaunchBound{1});
  const double wait_s = LaunchBound{1}.wait_ms() * 1e-3;
  Kernel& k = dev->kernel({"sustain", "fma_load", {{"counters", false}}});
  const size_t items = size_t{1} << 23;  // 32 MiB of results: under lavapipe's 128 MiB buffers
  auto out = dev->create_buffer(items * sizeof(float));
  auto clock = dev->create_buffer(2 * sizeof(uint64_t));
  const auto rounds = static_cast<uint32_t>(loop_trip_cap(dev->info().features, UINT32_MAX, 8));
  const KernelArg args[] = {out.get(), clock.get(), rounds, 0.9999f, 1e-5f};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    dev->launch(k, Range::d1(items), Range::d1(64), args);
    FAIL() << "an hours-long launch returned";
  } catch (const LaunchTimeout& e) {
    const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(e.device_lost) << e.what();
    EXPECT_NE(std::string(e.what()).find("fma_load"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ran past its bound of 5000 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the device is lost"), std::string::npos) << e.what();
    EXPECT_GE(took_s, 2 * wait_s);
    EXPECT_LE(took_s, 2 * wait_s + kNoticeSlackS);
  }
  EXPECT_THROW(dev->launch(k, Range::d1(64), Range::d1(64), args), DeviceLost);
  EXPECT_THROW(dev->read_values<float>(*out, 1), DeviceLost);
  const auto t_close = std::chrono::steady_clock::now();
  out.reset();
  clock.reset();
  dev.reset();
  EXPECT_LE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t_close).count(), kNoticeSlackS);
}

// In a process of its own (a death test, re-executed): the cut launch runs
// on in the driver's threads until the process exits, and would hold a
// CPU device's cores, or PoCL's queue of work, under every later test of a
// process that ran them all (ctest runs each test alone anyway).
void in_own_process(const std::string& id) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        expect_endless_launch_is_cut(id);
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(LaunchBound, EndlessOpenClLaunchIsCutAndTheDeviceLost) {
  const std::string id = cpu_device_id();
  if (id.empty()) GTEST_SKIP() << "no OpenCL CPU device (install pocl-opencl-icd)";
  in_own_process(id);
}

TEST(LaunchBound, EndlessVulkanLaunchIsCutAndTheDeviceLost) {
  const std::string id = test::vulkan_device_id();
  if (id.empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  in_own_process(id);
}

// The same on the devices GPUSCOPE_LAUNCH_BOUND_DEVICES names (ids, comma
// separated): how the bound is validated on a GPU, where the cut launch
// runs on until the process exits and its context is torn down.
TEST(LaunchBound, EndlessLaunchOnNamedDevicesIsCut) {
  const char* ids = std::getenv("GPUSCOPE_LAUNCH_BOUND_DEVICES");
  if (ids == nullptr || *ids == '\0') GTEST_SKIP() << "GPUSCOPE_LAUNCH_BOUND_DEVICES names no device";
  std::istringstream list(ids);
  for (std::string id; std::getline(list, id, ',');) {
    SCOPED_TRACE(id);
    in_own_process(id);
  }
}

}  // namespace
}  // namespace gpuscope
