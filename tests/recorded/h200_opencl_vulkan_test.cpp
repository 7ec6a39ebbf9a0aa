// One H200 measured through OpenCL and through Vulkan in one machine session
// (tests/data/h200/full_run_opencl_beside_vulkan.json, full_run_vulkan.json):
// the two APIs see one GPU, and what the hardware sets (arithmetic, DRAM and
// shared-memory bandwidth, the L1 hit) reads the same through both.
#include "core/device_identity.hpp"
#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

using test::finding_value;
using test::find_finding;

class H200ThroughTwoApis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    opencl_ = new Results(load_recorded("h200/full_run_opencl_beside_vulkan.json"));
    vulkan_ = new Results(load_recorded("h200/full_run_vulkan.json"));
  }
  static void TearDownTestSuite() {
    delete opencl_;
    delete vulkan_;
  }
  static Results* opencl_;
  static Results* vulkan_;
};
Results* H200ThroughTwoApis::opencl_ = nullptr;
Results* H200ThroughTwoApis::vulkan_ = nullptr;

TEST_F(H200ThroughTwoApis, AreOneGpu) {
  EXPECT_EQ(opencl_->device.uuid, vulkan_->device.uuid);
  EXPECT_FALSE(vulkan_->device.uuid.empty());
  EXPECT_EQ(match_device_identity(opencl_->device, vulkan_->device).verdict, DeviceIdentityMatch::Verdict::same);
}

// The targets: FP32 FMA, DRAM read and shared-memory bandwidth
// within 3% of OpenCL's on the same machine.
TEST_F(H200ThroughTwoApis, RatesTheHardwareSetsAgreeWithinThreePercent) {
  for (const char* id : {"compute.fp32.fma.throughput_gops", "memory.dram.bandwidth_gbps", "local.bandwidth_gbps"}) {
    const double cl = finding_value(*opencl_, id), vk = finding_value(*vulkan_, id);
    EXPECT_NEAR(vk / cl, 1.0, 0.03) << id << ": OpenCL " << cl << ", Vulkan " << vk;
  }
}

// The L1 hit through Vulkan within 10% of 32 cycles, at the clock the OpenCL
// run measured (Vulkan reports none).
TEST_F(H200ThroughTwoApis, VulkanL1HitIsThirtyTwoCycles) {
  const double mhz = finding_value(*opencl_, "device.measured_clock_mhz");
  const double cycles = finding_value(*vulkan_, "memory.L1.latency_ns") * mhz / 1000;
  EXPECT_NEAR(cycles, 32, 3.2);
}

TEST_F(H200ThroughTwoApis, MatrixEnginesMeasuredThroughCooperativeMatrices) {
  for (const char* id : {"compute.matrix.f16xf16->f32.16x16x16.throughput_gops",
                         "compute.matrix.i8xi8->i32.16x16x32.throughput_gops"})
    EXPECT_GT(finding_value(*vulkan_, id), 0) << id;
  EXPECT_EQ(find_finding(opencl_->findings, "compute.matrix.f16xf16->f32.16x16x16.throughput_gops"), nullptr);
}

// The sweep under a required subgroup size of 32 ran out of budget at
// blocks of 4: too short to see a 32-lane step, so no width is read from it.
TEST_F(H200ThroughTwoApis, TooShortARequiredSizeSweepReadsNoWidth) {
  ASSERT_NE(vulkan_->find_series("divergence.blocks.subgroup_32"), nullptr);
  EXPECT_EQ(find_finding(vulkan_->findings, "exec.wave_width.subgroup_32"), nullptr);
  EXPECT_EQ(finding_value(*vulkan_, "exec.wave_width"), 32);
}

// The divergence probe alone through Vulkan: the sweep under the required
// size 32 reaches blocks of 64 and reads the width the kernel asked for.
TEST(H200ThroughVulkan, RequiredSubgroupSizeIsTheWidthMeasured) {
  const Results r = load_recorded("h200/divergence_vulkan_required_subgroup.json");
  EXPECT_EQ(finding_value(r, "exec.wave_width.subgroup_32"), 32);
  const Finding* agrees = find_finding(r.findings, "exec.wave_width.subgroup_32.as_required");
  ASSERT_NE(agrees, nullptr);
  EXPECT_TRUE(std::get<bool>(agrees->value));
}

}  // namespace
}  // namespace gpuscope
