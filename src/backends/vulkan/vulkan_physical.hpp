// Internal to the Vulkan backend: one physical device as gpuscope reads it
// (properties, features, extensions, memory types, the compute queue), and
// its description as a DeviceInfo.
#pragma once

#include <volk.h>  // before any other Vulkan header

#include "backends/backend.hpp"
#include "backends/vulkan/cooperative_matrix.hpp"
#include "backends/vulkan/vulkan_graphics.hpp"
#include "backends/vulkan/vulkan_instance.hpp"
#include "core/device_info.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuscope::vulkan {

// The Vulkan format of an ImageFormat: RGBA, four 32-bit channels.
inline VkFormat vk_format(ImageFormat f) {
  return f == ImageFormat::kRgba32Float ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R32G32B32A32_UINT;
}

// What the device can do with the images compute shaders read through
// texelFetch (src/kernels/vulkan/README.md): uniform texel buffers (the
// ImageKind::kBuffer1D form) and sampled 2D images of optimal tiling that
// transfers write (ImageKind::k2D), per ImageFormat.
struct ImageSupport {
  std::array<bool, 2> texel_buffer{false, false};  // by ImageFormat
  std::array<bool, 2> sampled_2d{false, false};
  ImageLimits limits;  // of ImageFormat::kRgba32Uint, the format the texture probe reads; 0 where absent
  bool offered() const { return limits.max_buffer_pixels > 0 || limits.max_2d_width > 0; }
  bool any_texel_buffer() const { return texel_buffer[0] || texel_buffer[1]; }
};

// VK_ARM_shader_core_properties' structure; headers before 1.3.245 lack it,
// so it is declared here as the Vulkan registry defines it (structure type
// 1000415000: per shader core and clock, pixels, texels and FP32 FMAs).
#ifdef VK_ARM_shader_core_properties
using ArmShaderCoreProperties = VkPhysicalDeviceShaderCorePropertiesARM;
inline constexpr VkStructureType kArmShaderCorePropertiesType =
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_ARM;
#else
struct ArmShaderCoreProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t pixelRate;
  uint32_t texelRate;
  uint32_t fmaRate;
};
inline constexpr VkStructureType kArmShaderCorePropertiesType = static_cast<VkStructureType>(1000415000);
#endif
inline constexpr const char* kArmShaderCorePropertiesExtension = "VK_ARM_shader_core_properties";

// Structures initialised by their sType alone, the rest zero: the API's idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

// Everything gpuscope reads from one physical device, and what it enables.
struct Physical {
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t api = 0;  // min(device, instance)
  std::set<std::string> exts;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan13Properties p13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv_sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  VkPhysicalDeviceShaderCoreProperties2AMD amd2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  ArmShaderCoreProperties arm_core{kArmShaderCorePropertiesType};
#ifdef VK_ARM_shader_core_builtins
  VkPhysicalDeviceShaderCoreBuiltinsPropertiesARM arm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_BUILTINS_PROPERTIES_ARM};
#endif
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceShaderClockFeaturesKHR clock{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  // Cooperative matrices: VK_KHR_cooperative_matrix, else the older
  // VK_NV_cooperative_matrix; the shapes listed, for the matrix family.
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  std::vector<MatrixShape> matrix_shapes;
  std::vector<std::string> matrix_left_out;  // listed shapes the matrix family cannot name, with why
  VkPhysicalDeviceMemoryProperties mem{};
  std::optional<uint32_t> queue_family;
  bool graphics_queue = false;  // queue_family has GRAPHICS too
  GraphicsSupport graphics;     // the graphics facet's limits, or why there is none
  uint32_t timestamp_bits = 0;
  ImageSupport images;

  bool has(const char* ext) const { return exts.count(ext) != 0; }
  const VkPhysicalDeviceLimits& limits() const { return props.properties.limits; }
  bool v13() const { return api >= VK_API_VERSION_1_3; }
  bool bda() const { return f12.bufferDeviceAddress == VK_TRUE; }
  bool clock_ext() const { return has(VK_KHR_SHADER_CLOCK_EXTENSION_NAME); }
  bool exe_ext() const { return has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME); }
  // The cooperative-matrix extension whose feature structure is chained
  // (and so must be enabled with it); nullptr for none.
  const char* coop_ext() const {
    if (has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) return VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) return VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    return nullptr;
  }
  bool coop_khr() const { return has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) && coop.cooperativeMatrix; }
  bool coop_nv_only() const {
    return !has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) && has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) &&
           coop_nv.cooperativeMatrix;
  }

  // Reads everything above; a device below Vulkan 1.2 is read only as far
  // as unusable() needs.
  explicit Physical(VkPhysicalDevice d, uint32_t instance_api);

  // Why gpuscope cannot use the device; empty when it can.
  std::string unusable() const;
  // Largest single buffer a shader can address through one descriptor.
  uint64_t max_buffer_bytes() const;
  // The wave widths compute shaders may run at, ascending.
  std::vector<uint32_t> subgroup_sizes() const;

 private:
  void list_matrix_shapes();
  void read_image_support();
};

#pragma GCC diagnostic pop

// The device as gpuscope lists it, with id "vulkan:<index>".
DeviceInfo describe(const Physical& p, size_t index);

}  // namespace gpuscope::vulkan
