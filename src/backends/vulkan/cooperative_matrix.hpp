// VK_KHR_cooperative_matrix for the Vulkan backend: the declarations it
// needs where the Vulkan headers predate the extension (Debian 12's are
// 1.3.239; the extension arrived in 1.3.255), and the mapping from what the
// driver lists to DeviceFeatures::matrix_shapes.
//
// Every value below is the Vulkan registry's (vk.xml, extension number 507):
// the structure types 1000506000..2, the component types (VkComponentTypeKHR:
// 0..10, BFLOAT16 1000141000 from VK_KHR_shader_bfloat16, FLOAT8_E4M3 and
// FLOAT8_E5M2 1000491002 and 1000491003 from VK_EXT_shader_float8) and the
// scopes (VkScopeKHR: device 1, workgroup 2, subgroup 3, queue family 5).
// Headers that define the extension are used as they are.
//
// How the backend uses it: where the device lists the extension, chain
// VkPhysicalDeviceCooperativeMatrixFeaturesKHR into vkGetPhysicalDeviceFeatures2
// and, with cooperativeMatrix true, enable the extension and the feature at
// device creation; list the shapes with list_matrix_shapes(); build kernels
// of family "matrix" from vulkan::matrix_chain_spirv() (src/kernels/vulkan/
// matrix_spirv.hpp), flavour khr. Where only VK_NV_cooperative_matrix is
// there, the same through its NV structures (matrix_shape_of_nv), flavour nv.
#pragma once

#include "core/device_info.hpp"

#include <vulkan/vulkan_core.h>

#include <optional>
#include <string>
#include <vector>

#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"

typedef enum VkComponentTypeKHR {
  VK_COMPONENT_TYPE_FLOAT16_KHR = 0,
  VK_COMPONENT_TYPE_FLOAT32_KHR = 1,
  VK_COMPONENT_TYPE_FLOAT64_KHR = 2,
  VK_COMPONENT_TYPE_SINT8_KHR = 3,
  VK_COMPONENT_TYPE_SINT16_KHR = 4,
  VK_COMPONENT_TYPE_SINT32_KHR = 5,
  VK_COMPONENT_TYPE_SINT64_KHR = 6,
  VK_COMPONENT_TYPE_UINT8_KHR = 7,
  VK_COMPONENT_TYPE_UINT16_KHR = 8,
  VK_COMPONENT_TYPE_UINT32_KHR = 9,
  VK_COMPONENT_TYPE_UINT64_KHR = 10,
  VK_COMPONENT_TYPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkComponentTypeKHR;

typedef enum VkScopeKHR {
  VK_SCOPE_DEVICE_KHR = 1,
  VK_SCOPE_WORKGROUP_KHR = 2,
  VK_SCOPE_SUBGROUP_KHR = 3,
  VK_SCOPE_QUEUE_FAMILY_KHR = 5,
  VK_SCOPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkScopeKHR;

typedef struct VkCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize;
  uint32_t NSize;
  uint32_t KSize;
  VkComponentTypeKHR AType;
  VkComponentTypeKHR BType;
  VkComponentTypeKHR CType;
  VkComponentTypeKHR ResultType;
  VkBool32 saturatingAccumulation;
  VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;

typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;

typedef struct VkPhysicalDeviceCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void* pNext;
  VkShaderStageFlags cooperativeMatrixSupportedStages;
} VkPhysicalDeviceCooperativeMatrixPropertiesKHR;

typedef VkResult(VKAPI_PTR* PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice physicalDevice, uint32_t* pPropertyCount, VkCooperativeMatrixPropertiesKHR* pProperties);

#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR static_cast<VkStructureType>(1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR static_cast<VkStructureType>(1000506001)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR static_cast<VkStructureType>(1000506002)
#endif

namespace gpuscope::vulkan {

// Component types added after VK_KHR_cooperative_matrix itself, which
// headers new enough for the extension may still lack.
inline constexpr uint32_t kComponentTypeBfloat16 = 1000141000;
inline constexpr uint32_t kComponentTypeFloat8E4M3 = 1000491002;
inline constexpr uint32_t kComponentTypeFloat8E5M2 = 1000491003;

// The type tag (core/matrix_chain.hpp) of a component type; "" for one the
// matrix family has no tag for (16- and 64-bit integers, packed types).
inline std::string matrix_component_tag(uint32_t component_type) {
  switch (component_type) {
    case 0: return "f16";
    case 1: return "f32";
    case 2: return "f64";
    case 3: return "i8";
    case 5: return "i32";
    case 7: return "u8";
    case 9: return "u32";
    case kComponentTypeBfloat16: return "bf16";
    case kComponentTypeFloat8E4M3: return "f8e4m3";
    case kComponentTypeFloat8E5M2: return "f8e5m2";
    default: return "";
  }
}

// One listed property as a MatrixShape; nullopt, with why, for a scope other
// than the subgroup (the matrix kernels are written for subgroups) or a
// component type without a tag.
inline std::optional<MatrixShape> matrix_shape_of(const VkCooperativeMatrixPropertiesKHR& p, std::string* why = nullptr) {
  const auto fail = [&](std::string reason) -> std::optional<MatrixShape> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (p.scope != VK_SCOPE_SUBGROUP_KHR)
    return fail("scope " + std::to_string(static_cast<int>(p.scope)) + " (the matrix kernels use subgroup scope, 3)");
  MatrixShape s{matrix_component_tag(p.AType), matrix_component_tag(p.BType), matrix_component_tag(p.CType),
                matrix_component_tag(p.ResultType), p.MSize, p.NSize, p.KSize, p.saturatingAccumulation == VK_TRUE};
  for (const auto* t : {&s.a, &s.b, &s.c, &s.result})
    if (t->empty()) return fail("a component type the matrix family has no name for");
  return s;
}

// The same for VK_NV_cooperative_matrix's list (its D type is the result).
inline std::optional<MatrixShape> matrix_shape_of_nv(const VkCooperativeMatrixPropertiesNV& p, std::string* why = nullptr) {
  VkCooperativeMatrixPropertiesKHR k{};
  k.MSize = p.MSize;
  k.NSize = p.NSize;
  k.KSize = p.KSize;
  k.AType = static_cast<VkComponentTypeKHR>(p.AType);
  k.BType = static_cast<VkComponentTypeKHR>(p.BType);
  k.CType = static_cast<VkComponentTypeKHR>(p.CType);
  k.ResultType = static_cast<VkComponentTypeKHR>(p.DType);
  k.saturatingAccumulation = VK_FALSE;
  k.scope = static_cast<VkScopeKHR>(p.scope);
  return matrix_shape_of(k, why);
}

// Every listed shape the family can name, through the driver's
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR; those it cannot, with
// why, in `left_out`.
inline std::vector<MatrixShape> list_matrix_shapes(PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get,
                                                   VkPhysicalDevice device, std::vector<std::string>* left_out) {
  uint32_t count = 0;
  if (!get || get(device, &count, nullptr) != VK_SUCCESS || count == 0) return {};
  std::vector<VkCooperativeMatrixPropertiesKHR> props(count);
  for (auto& p : props) {
    p = {};
    p.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  }
  if (get(device, &count, props.data()) != VK_SUCCESS) return {};
  props.resize(count);
  std::vector<MatrixShape> out;
  for (const auto& p : props) {
    std::string why;
    if (auto s = matrix_shape_of(p, &why))
      out.push_back(*s);
    else if (left_out)
      left_out->push_back(std::to_string(p.MSize) + "x" + std::to_string(p.NSize) + "x" + std::to_string(p.KSize) +
                          ": " + why);
  }
  return out;
}

}  // namespace gpuscope::vulkan
