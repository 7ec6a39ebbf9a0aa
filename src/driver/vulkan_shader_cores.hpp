// What a Vulkan driver says of its shader cores and subgroups, as driver
// facts (core/driver_facts.hpp) in a snapshot of driver "vulkan": the
// properties of VK_ARM_shader_core_builtins, VK_ARM_shader_core_properties,
// VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties and its second
// version, and the subgroup sizes of Vulkan 1.1 and 1.3 (size control).
// analysis/driver_agreement.cpp sets them beside the measured findings.
//
// The structs mirror the Vulkan ones member for member (same names, same
// meaning) without Vulkan's headers, so that the conversion is tested on
// recorded values where no such GPU is at hand; the Vulkan backend copies
// the driver's structs into them (backends/vulkan/vulkan_physical.cpp).
#pragma once

#include "core/driver_facts.hpp"

#include <cstdint>
#include <optional>

namespace gpuscope {

struct VkArmShaderCoreBuiltins {  // VkPhysicalDeviceShaderCoreBuiltinsPropertiesARM
  uint64_t shaderCoreMask = 0;
  uint32_t shaderCoreCount = 0;
  uint32_t shaderWarpsPerCore = 0;
};

struct VkArmShaderCoreProperties {  // VkPhysicalDeviceShaderCorePropertiesARM, per core per clock
  uint32_t pixelRate = 0;
  uint32_t texelRate = 0;
  uint32_t fmaRate = 0;  // single-precision FMAs
};

struct VkNvShaderSmBuiltins {  // VkPhysicalDeviceShaderSMBuiltinsPropertiesNV
  uint32_t shaderSMCount = 0;
  uint32_t shaderWarpsPerSM = 0;
};

struct VkAmdShaderCoreProperties {  // VkPhysicalDeviceShaderCorePropertiesAMD
  uint32_t shaderEngineCount = 0;
  uint32_t shaderArraysPerEngineCount = 0;
  uint32_t computeUnitsPerShaderArray = 0;
  uint32_t simdPerComputeUnit = 0;
  uint32_t wavefrontsPerSimd = 0;
  uint32_t wavefrontSize = 0;
  uint32_t sgprsPerSimd = 0;
  uint32_t minSgprAllocation = 0;
  uint32_t maxSgprAllocation = 0;
  uint32_t sgprAllocationGranularity = 0;
  uint32_t vgprsPerSimd = 0;
  uint32_t minVgprAllocation = 0;
  uint32_t maxVgprAllocation = 0;
  uint32_t vgprAllocationGranularity = 0;
};

struct VkAmdShaderCoreProperties2 {  // VkPhysicalDeviceShaderCoreProperties2AMD
  uint32_t shaderCoreFeatures = 0;
  uint32_t activeComputeUnitCount = 0;
};

// What one physical device filled in; an extension the device does not
// offer is absent.
struct VulkanShaderCoreProperties {
  std::optional<VkArmShaderCoreBuiltins> arm_builtins;
  std::optional<VkArmShaderCoreProperties> arm_core;
  std::optional<VkNvShaderSmBuiltins> nv_sm;
  std::optional<VkAmdShaderCoreProperties> amd;
  std::optional<VkAmdShaderCoreProperties2> amd2;
  uint32_t subgroup_size = 0;  // VkPhysicalDeviceVulkan11Properties::subgroupSize; 0: not read
  // Vulkan 1.3 (subgroup size control): the range a compute shader may ask
  // for, and whether it may require a size; absent below Vulkan 1.3.
  std::optional<uint32_t> min_subgroup_size, max_subgroup_size;
  std::optional<bool> required_size_in_compute;
};

// Fact keys (docs/driver-facts.md), each with the extension and member in
// its source:
//   shader_core.count            ARM shaderCoreCount, NV shaderSMCount, AMD engines x arrays x CUs per array
//   shader_core.active_count     AMD activeComputeUnitCount (v2)
//   shader_core.mask             ARM shaderCoreMask, as "0x..." text
//   shader_core.warps_per_core   ARM shaderWarpsPerCore, NV shaderWarpsPerSM, AMD SIMDs x waves per SIMD
//   shader_core.{fma,texel,pixel}_per_clock   ARM fmaRate, texelRate, pixelRate (per core)
//   shader_core.wave_width       AMD wavefrontSize
//   shader_core.{shader_engines,arrays_per_engine,cus_per_array,simds_per_cu,waves_per_simd}   AMD
//   registers.{sgprs,vgprs}_per_simd, registers.{sgpr,vgpr}_{min,max,granularity}   AMD
//   subgroup.size, subgroup.min_size, subgroup.max_size, subgroup.required_size_in_compute ("yes"/"no")
// `when` is "start": the properties do not change during a run.
DriverSnapshot vulkan_shader_core_snapshot(const VulkanShaderCoreProperties& p);

}  // namespace gpuscope
