// What Vulkan drivers say of their shader cores (driver/vulkan_shader_cores.hpp)
// as facts, and the checks driver_agreement sets them beside, on property
// structs of GPUs this machine does not have:
//   - Arm: a Mali-G610 MC4 (RK3588) with Arm's driver g24p0, whose
//     VK_ARM_shader_core_builtins values vulkan.gpuinfo.org report 41734
//     records (core count 4, core mask 0x50005: cores 0, 2, 16 and 18, 64
//     warps per core), as a public optimisation study quotes them. No
//     recorded VK_ARM_shader_core_properties is at hand: its rates here are
//     the Mali-G610's in Arm's libGPUInfo (64 FMA, 8 texels, 4 pixels per
//     core per clock), what the extension reports by its definition.
//   - AMD: no recorded dump is at hand; the values are GCN's Polaris 10
//     (RX 480/580: 4 shader engines of one array of 9 CUs, 4 SIMDs of 10
//     wavefronts, wave64, 800 SGPRs and 256 VGPRs per SIMD), the figures of
//     AMD's GCN architecture that a driver fills the structure with.
#include "analysis/driver_agreement.hpp"
#include "driver/vulkan_shader_cores.hpp"
#include "report/driver_section.hpp"

#include "support/driver_facts.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

namespace gpuscope::test {
namespace {

VulkanShaderCoreProperties mali_g610_mc4() {
  VulkanShaderCoreProperties p;
  p.arm_builtins = VkArmShaderCoreBuiltins{0x50005, 4, 64};
  p.arm_core = VkArmShaderCoreProperties{4, 8, 64};
  p.subgroup_size = 16;
  p.min_subgroup_size = 16;
  p.max_subgroup_size = 16;
  p.required_size_in_compute = false;
  return p;
}

VulkanShaderCoreProperties polaris10() {
  VulkanShaderCoreProperties p;
  p.amd = VkAmdShaderCoreProperties{4, 1, 9, 4, 10, 64, 800, 16, 104, 16, 256, 4, 256, 4};
  p.amd2 = VkAmdShaderCoreProperties2{0, 36};
  p.subgroup_size = 64;
  return p;
}

Finding measured(const std::string& id, double v) { return make_finding(id, v, "", 0.9, {}, {}, {}, "", ""); }

TEST(VulkanShaderCores, ArmBuiltinsAndPropertiesBecomeFacts) {
  const DriverSnapshot s = vulkan_shader_core_snapshot(mali_g610_mc4());
  EXPECT_EQ(s.driver, "vulkan");
  EXPECT_EQ(s.when, "start");
  EXPECT_EQ(num(s, "shader_core.count"), 4);
  EXPECT_EQ(str(s, "shader_core.mask"), "0x50005");
  EXPECT_EQ(num(s, "shader_core.warps_per_core"), 64);
  EXPECT_EQ(num(s, "shader_core.fma_per_clock"), 64);
  EXPECT_EQ(num(s, "shader_core.texel_per_clock"), 8);
  EXPECT_EQ(num(s, "shader_core.pixel_per_clock"), 4);
  EXPECT_EQ(num(s, "subgroup.size"), 16);
  EXPECT_EQ(str(s, "subgroup.required_size_in_compute"), "no");
  EXPECT_EQ(fact(s, "shader_core.count").source, "VK_ARM_shader_core_builtins shaderCoreCount");
  EXPECT_EQ(fact(s, "shader_core.fma_per_clock").source.rfind("VK_ARM_shader_core_properties fmaRate", 0),
            0u);
  EXPECT_EQ(s.find("shader_core.wave_width"), nullptr) << "Arm gives no wavefront size";
}

TEST(VulkanShaderCores, AmdPropertiesBecomeFactsWithDerivedCounts) {
  const DriverSnapshot s = vulkan_shader_core_snapshot(polaris10());
  EXPECT_EQ(num(s, "shader_core.count"), 36);  // 4 engines x 1 array x 9 CUs
  EXPECT_EQ(num(s, "shader_core.active_count"), 36);
  EXPECT_EQ(num(s, "shader_core.warps_per_core"), 40);  // 4 SIMDs x 10 waves
  EXPECT_EQ(num(s, "shader_core.wave_width"), 64);
  EXPECT_EQ(num(s, "registers.sgprs_per_simd"), 800);
  EXPECT_EQ(num(s, "registers.vgprs_per_simd"), 256);
  EXPECT_EQ(num(s, "registers.vgpr_granularity"), 4);
  EXPECT_EQ(num(s, "shader_core.simds_per_cu"), 4);
  EXPECT_EQ(s.find("subgroup.min_size"), nullptr) << "no Vulkan 1.3 properties were read";
}

TEST(VulkanShaderCores, NothingOfferedNothingClaimed) {
  EXPECT_TRUE(vulkan_shader_core_snapshot({}).facts.empty());
}

TEST(VulkanShaderCores, ArmFactsAgreeWithAMaliRun) {
  Results r;
  r.device.name = "Mali-G610";
  r.device.driver.push_back(vulkan_shader_core_snapshot(mali_g610_mc4()));
  r.findings = {measured("memory.bandwidth.workgroup_period", 4), measured("exec.max_waves_per_cu", 64),
                measured("exec.wave_width", 16), measured("device.measured_clock_mhz", 1000),
                // 64 FMA x 4 cores x 1 GHz = 256 Gop/s (an FMA one op); 94% of it measured.
                measured("compute.fp32.fma.throughput_gops", 240)};
  auto checks = analysis::check_driver_facts(r);
  ASSERT_EQ(checks.size(), 4u);  // cores, resident waves, wave width, fp32 fma rate
  for (const auto& c : checks) EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;
  EXPECT_NE(checks.back().claimed.find("256 Gop/s"), std::string::npos) << checks.back().claimed;

  // A run whose FMA kernels got half the rate, and whose waves were bound by
  // registers: both disagree, with why.
  r.findings[4] = measured("compute.fp32.fma.throughput_gops", 128);
  r.findings[1] = measured("exec.max_waves_per_cu", 32);
  checks = analysis::check_driver_facts(r);
  int disagree = 0;
  for (const auto& c : checks) {
    if (c.agrees) continue;
    ++disagree;
    EXPECT_FALSE(c.note.empty()) << c.what;
  }
  EXPECT_EQ(disagree, 2);
  EXPECT_NE(driver_section_text(r).find("fp32 fma rate DISAGREES"), std::string::npos)
      << driver_section_text(r);
  EXPECT_NE(driver_section_markdown(r).find("resident waves per core"), std::string::npos);
  EXPECT_NE(driver_section_html(r).str().find("50% of the driver&#39;s rate"), std::string::npos)
      << driver_section_html(r).str();
}

TEST(VulkanShaderCores, AmdWavefrontSizeAgainstAWave32Run) {
  Results r;
  r.device.name = "AMD Radeon RX 580";
  r.device.driver.push_back(vulkan_shader_core_snapshot(polaris10()));
  r.findings = {measured("memory.bandwidth.workgroup_period", 36), measured("exec.max_waves_per_cu", 40),
                measured("exec.wave_width", 64)};
  auto checks = analysis::check_driver_facts(r);
  ASSERT_EQ(checks.size(), 4u);  // cores (the active count), waves, subgroup size, wavefront size
  for (const auto& c : checks) EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;
  EXPECT_NE(checks[0].claimed.find("activeComputeUnitCount"), std::string::npos) << checks[0].claimed;

  r.findings[2] = measured("exec.wave_width", 32);
  checks = analysis::check_driver_facts(r);
  int disagree = 0;
  for (const auto& c : checks) disagree += c.what == "wave width" && !c.agrees ? 1 : 0;
  EXPECT_EQ(disagree, 2);  // against subgroupSize and against wavefrontSize
}

}  // namespace
}  // namespace gpuscope::test
