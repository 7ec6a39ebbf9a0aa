// Driver facts against measurements on runs recorded on the H100: NVML's
// and the probes' view of the same GPU.
#include "analysis/driver_agreement.hpp"
#include "driver/vulkan_shader_cores.hpp"
#include "report/results_json.hpp"

#include "support/driver_facts.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

namespace gpuscope::test {
namespace {

// Recorded on the H100: NVML's and the measurements' view of the same GPU.
TEST(DriverAgreementRecorded, H100ModelClockAndSmCountAgree) {
  const Results full =
      read_recorded("h100/full_run_with_driver_facts.json");
  ASSERT_FALSE(full.device.driver.empty());
  auto checks = analysis::check_driver_facts(full);
  ASSERT_EQ(checks.size(), 3u);  // model, clock against the maximum and the current clock
  for (const auto& c : checks) EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;

  const Results lib =
      read_recorded("h100/opencl_library_option.json");
  checks = analysis::check_driver_facts(lib);
  int cores = 0;
  for (const auto& c : checks) {
    EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;
    cores += c.what == "shader cores" ? 1 : 0;
  }
  EXPECT_EQ(cores, 2);  // the API's 132 compute units and the measured work-group period of 132
  const DriverSnapshot* end = nullptr;
  for (const auto& s : lib.device.driver)
    if (s.driver == "nvml" && s.when == "end") end = &s;
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(num(*end, "cores"), 132);
  EXPECT_EQ(num(*end, "clock.max_mhz"), 1980);
}


// The whole default run with the SM count: every check the snapshots allow agrees.
TEST(DriverAgreementRecorded, H100WholeRunAgreesOnModelCoresAndClock) {
  const Results r = read_recorded("h100/full_run_with_nvml_sm_count.json");
  const auto checks = analysis::check_driver_facts(r);
  ASSERT_EQ(checks.size(), 5u);  // model, cores twice (API, measured period), clock twice (maximum, current)
  for (const auto& c : checks) EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;
}

// The H100's whole Vulkan run with what VK_NV_shader_sm_builtins said of it
// (the run recorded shaderSMCount as its compute units, 132, and
// shaderWarpsPerSM as vendor_info.nv_warps_per_sm, 64; its subgroups are 32
// wide, without a range): SM count, resident warps and wave width agree
// with the measured period of 132 work-groups, 64 waves per SM and wave32.
TEST(DriverAgreementRecorded, H100VulkanSmBuiltinsAgreeWithTheMeasuredSmsWarpsAndWaves) {
  Results r = read_recorded("h100/full_run_vulkan.json");
  VulkanShaderCoreProperties p;
  p.nv_sm = VkNvShaderSmBuiltins{r.device.compute_units,
                                 r.device.vendor_info.at("nv_warps_per_sm").get<uint32_t>()};
  p.subgroup_size = r.device.vendor_info.at("vk_subgroup_size").get<uint32_t>();
  p.min_subgroup_size = r.device.vendor_info.at("vk_min_subgroup_size").get<uint32_t>();
  p.max_subgroup_size = r.device.vendor_info.at("vk_max_subgroup_size").get<uint32_t>();
  ASSERT_EQ(p.nv_sm->shaderSMCount, 132u);
  ASSERT_EQ(p.nv_sm->shaderWarpsPerSM, 64u);
  r.device.driver.insert(r.device.driver.begin(), vulkan_shader_core_snapshot(p));
  int vulkan = 0;
  for (const auto& c : analysis::check_driver_facts(r)) {
    if (c.claimed.find("(vulkan, ") == std::string::npos) continue;
    ++vulkan;
    EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed << ": " << c.note;
  }
  EXPECT_EQ(vulkan, 3);  // SMs, resident warps, wave width
}

}  // namespace
}  // namespace gpuscope::test
