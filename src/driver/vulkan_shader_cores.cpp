#include "driver/vulkan_shader_cores.hpp"

#include <fmt/format.h>

#include <string>

namespace gpuscope {

DriverSnapshot vulkan_shader_core_snapshot(const VulkanShaderCoreProperties& p) {
  DriverSnapshot s;
  s.when = "start";
  s.driver = "vulkan";
  auto add = [&s](std::string key, nlohmann::json value, std::string unit, std::string source) {
    s.facts.push_back({std::move(key), std::move(value), std::move(unit), std::move(source)});
  };
  if (const auto& a = p.arm_builtins) {
    const std::string ext = "VK_ARM_shader_core_builtins ";
    add("shader_core.count", a->shaderCoreCount, "", ext + "shaderCoreCount");
    add("shader_core.mask", fmt::format("{:#x}", a->shaderCoreMask), "", ext + "shaderCoreMask");
    add("shader_core.warps_per_core", a->shaderWarpsPerCore, "", ext + "shaderWarpsPerCore");
  }
  if (const auto& a = p.arm_core) {
    const std::string ext = "VK_ARM_shader_core_properties ";
    add("shader_core.fma_per_clock", a->fmaRate, "", ext + "fmaRate (FP32 FMAs per clock per core)");
    add("shader_core.texel_per_clock", a->texelRate, "", ext + "texelRate (per clock per core)");
    add("shader_core.pixel_per_clock", a->pixelRate, "", ext + "pixelRate (per clock per core)");
  }
  if (const auto& n = p.nv_sm) {
    const std::string ext = "VK_NV_shader_sm_builtins ";
    add("shader_core.count", n->shaderSMCount, "", ext + "shaderSMCount");
    add("shader_core.warps_per_core", n->shaderWarpsPerSM, "", ext + "shaderWarpsPerSM");
  }
  if (const auto& a = p.amd) {
    const std::string ext = "VK_AMD_shader_core_properties ";
    add("shader_core.count",
        a->shaderEngineCount * a->shaderArraysPerEngineCount * a->computeUnitsPerShaderArray, "",
        ext + "shaderEngineCount x shaderArraysPerEngineCount x computeUnitsPerShaderArray");
    add("shader_core.warps_per_core", a->simdPerComputeUnit * a->wavefrontsPerSimd, "",
        ext + "simdPerComputeUnit x wavefrontsPerSimd");
    add("shader_core.wave_width", a->wavefrontSize, "", ext + "wavefrontSize");
    add("shader_core.shader_engines", a->shaderEngineCount, "", ext + "shaderEngineCount");
    add("shader_core.arrays_per_engine", a->shaderArraysPerEngineCount, "",
        ext + "shaderArraysPerEngineCount");
    add("shader_core.cus_per_array", a->computeUnitsPerShaderArray, "", ext + "computeUnitsPerShaderArray");
    add("shader_core.simds_per_cu", a->simdPerComputeUnit, "", ext + "simdPerComputeUnit");
    add("shader_core.waves_per_simd", a->wavefrontsPerSimd, "", ext + "wavefrontsPerSimd");
    add("registers.sgprs_per_simd", a->sgprsPerSimd, "", ext + "sgprsPerSimd");
    add("registers.sgpr_min", a->minSgprAllocation, "", ext + "minSgprAllocation");
    add("registers.sgpr_max", a->maxSgprAllocation, "", ext + "maxSgprAllocation");
    add("registers.sgpr_granularity", a->sgprAllocationGranularity, "", ext + "sgprAllocationGranularity");
    add("registers.vgprs_per_simd", a->vgprsPerSimd, "", ext + "vgprsPerSimd");
    add("registers.vgpr_min", a->minVgprAllocation, "", ext + "minVgprAllocation");
    add("registers.vgpr_max", a->maxVgprAllocation, "", ext + "maxVgprAllocation");
    add("registers.vgpr_granularity", a->vgprAllocationGranularity, "", ext + "vgprAllocationGranularity");
  }
  if (const auto& a = p.amd2)
    add("shader_core.active_count", a->activeComputeUnitCount, "",
        "VK_AMD_shader_core_properties2 activeComputeUnitCount");
  if (p.subgroup_size > 0)
    add("subgroup.size", p.subgroup_size, "", "VkPhysicalDeviceVulkan11Properties subgroupSize");
  if (p.min_subgroup_size)
    add("subgroup.min_size", *p.min_subgroup_size, "", "VkPhysicalDeviceVulkan13Properties minSubgroupSize");
  if (p.max_subgroup_size)
    add("subgroup.max_size", *p.max_subgroup_size, "", "VkPhysicalDeviceVulkan13Properties maxSubgroupSize");
  if (p.required_size_in_compute)
    add("subgroup.required_size_in_compute", *p.required_size_in_compute ? "yes" : "no", "",
        "VkPhysicalDeviceVulkan13Features subgroupSizeControl and requiredSubgroupSizeStages (compute)");
  return s;
}

}  // namespace gpuscope
