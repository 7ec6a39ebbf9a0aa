#include "backends/vulkan/vulkan_physical.hpp"

#include "core/printable.hpp"
#include "driver/vulkan_shader_cores.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {
namespace {

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x1010: return "Imagination";
    case 0x14E4: return "Broadcom";
    case 0x10005: return "Mesa";
    default: return fmt::format("vendor 0x{:04x}", id);
  }
}

std::string uuid_text(const uint8_t* u) {
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", u[i]);
  }
  return s;
}

// What the driver filled in of the shader-core extensions it offers, and
// its subgroup sizes.
VulkanShaderCoreProperties shader_core_properties(const Physical& p) {
  VulkanShaderCoreProperties s;
#ifdef VK_ARM_shader_core_builtins
  if (p.has(VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME))
    s.arm_builtins =
        VkArmShaderCoreBuiltins{p.arm.shaderCoreMask, p.arm.shaderCoreCount, p.arm.shaderWarpsPerCore};
#endif
  if (p.has(kArmShaderCorePropertiesExtension))
    s.arm_core = VkArmShaderCoreProperties{p.arm_core.pixelRate, p.arm_core.texelRate, p.arm_core.fmaRate};
  if (p.has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME))
    s.nv_sm = VkNvShaderSmBuiltins{p.nv_sm.shaderSMCount, p.nv_sm.shaderWarpsPerSM};
  if (p.has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    const auto& a = p.amd;
    s.amd = VkAmdShaderCoreProperties{a.shaderEngineCount,
                                      a.shaderArraysPerEngineCount,
                                      a.computeUnitsPerShaderArray,
                                      a.simdPerComputeUnit,
                                      a.wavefrontsPerSimd,
                                      a.wavefrontSize,
                                      a.sgprsPerSimd,
                                      a.minSgprAllocation,
                                      a.maxSgprAllocation,
                                      a.sgprAllocationGranularity,
                                      a.vgprsPerSimd,
                                      a.minVgprAllocation,
                                      a.maxVgprAllocation,
                                      a.vgprAllocationGranularity};
  }
  if (p.has(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME))
    s.amd2 = VkAmdShaderCoreProperties2{p.amd2.shaderCoreFeatures, p.amd2.activeComputeUnitCount};
  s.subgroup_size = p.p11.subgroupSize;
  if (p.v13()) {
    s.min_subgroup_size = p.p13.minSubgroupSize;
    s.max_subgroup_size = p.p13.maxSubgroupSize;
    s.required_size_in_compute =
        p.f13.subgroupSizeControl && (p.p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  }
  return s;
}

}  // namespace

Physical::Physical(VkPhysicalDevice d, uint32_t instance_api) : pd(d) {
  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(pd, &base);
  api = std::min(base.apiVersion, instance_api);
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> list(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, list.data());
  for (const auto& e : list) exts.insert(e.extensionName);
  if (api < VK_API_VERSION_1_2) return;  // not usable: describe() says why

  void** next = &props.pNext;
  auto chain = [&next](auto& s) {
    *next = &s;
    next = &s.pNext;
  };
  chain(p11);
  chain(p12);
  if (v13()) chain(p13);
  if (has(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME)) chain(pci);
  if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) chain(nv_sm);
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) chain(amd);
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME)) chain(amd2);
#ifdef VK_ARM_shader_core_builtins
  if (has(VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME)) chain(arm);
#endif
  if (has(kArmShaderCorePropertiesExtension)) chain(arm_core);
  vkGetPhysicalDeviceProperties2(pd, &props);

  next = &f.pNext;
  chain(f11);
  chain(f12);
  if (v13()) chain(f13);
  if (clock_ext()) chain(clock);
  if (exe_ext()) chain(exe);
  if (has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME))
    chain(coop);
  else if (has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
    chain(coop_nv);
  vkGetPhysicalDeviceFeatures2(pd, &f);
  list_matrix_shapes();
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  read_image_support();

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qs(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qs.data());
  // The first family with GRAPHICS and COMPUTE and timestamps (the graphics
  // facet runs on the one queue too), else the first with COMPUTE.
  for (const VkQueueFlags want : {VkQueueFlags{VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT},
                                  VkQueueFlags{VK_QUEUE_COMPUTE_BIT}}) {
    for (uint32_t i = 0; i < qn && !queue_family; ++i) {
      if ((qs[i].queueFlags & want) == want && qs[i].timestampValidBits > 0) {
        queue_family = i;
        timestamp_bits = qs[i].timestampValidBits;
        graphics_queue = (qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
      }
    }
  }
  graphics = read_graphics_support(*this, graphics_queue);
}


// Headers before 1.3.255 lack the KHR entry point, so it is looked up by
// name; the NV one volk loads.
void Physical::list_matrix_shapes() {
  if (coop_khr()) {
    const auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vkGetInstanceProcAddr(volkGetLoadedInstance(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    matrix_shapes = vulkan::list_matrix_shapes(get, pd, &matrix_left_out);
  } else if (coop_nv_only() && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) {
    uint32_t n = 0;
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, nullptr) != VK_SUCCESS) return;
    std::vector<VkCooperativeMatrixPropertiesNV> list(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, list.data()) != VK_SUCCESS) return;
    for (const auto& p : list) {
      std::string why;
      if (auto m = vulkan::matrix_shape_of_nv(p, &why))
        matrix_shapes.push_back(*m);
      else
        matrix_left_out.push_back(fmt::format("{}x{}x{}: {}", p.MSize, p.NSize, p.KSize, why));
    }
  }
}

void Physical::read_image_support() {
  for (const ImageFormat format : {ImageFormat::kRgba32Uint, ImageFormat::kRgba32Float}) {
    const auto i = static_cast<size_t>(format);
    VkFormatProperties fp{};
    vkGetPhysicalDeviceFormatProperties(pd, vk_format(format), &fp);
    images.texel_buffer[i] = (fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
    constexpr VkFormatFeatureFlags k2DFeatures =
        VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    VkImageFormatProperties ip{};
    images.sampled_2d[i] =
        (fp.optimalTilingFeatures & k2DFeatures) == k2DFeatures &&
        vkGetPhysicalDeviceImageFormatProperties(pd, vk_format(format), VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL,
                                                 VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, 0,
                                                 &ip) == VK_SUCCESS;
    if (format != ImageFormat::kRgba32Uint) continue;
    if (images.texel_buffer[i])
      images.limits.max_buffer_pixels =
          std::min<uint64_t>(limits().maxTexelBufferElements, max_buffer_bytes() / ImageDesc::kPixelBytes);
    if (images.sampled_2d[i]) {
      images.limits.max_2d_width = std::min(ip.maxExtent.width, limits().maxImageDimension2D);
      images.limits.max_2d_height = std::min(ip.maxExtent.height, limits().maxImageDimension2D);
    }
  }
}

std::string Physical::unusable() const {
  if (api < VK_API_VERSION_1_2)
    return fmt::format("Vulkan {}.{} (gpuscope needs 1.2)", VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
  if (!queue_family) return "no compute queue with timestamps";
  return "";
}

uint64_t Physical::max_buffer_bytes() const {
  uint64_t m = p11.maxMemoryAllocationSize;
  m = std::min<uint64_t>(m, limits().maxStorageBufferRange);
  if (v13()) m = std::min<uint64_t>(m, p13.maxBufferSize);
  return m & ~uint64_t{255};
}

std::vector<uint32_t> Physical::subgroup_sizes() const {
  std::vector<uint32_t> s;
  if (v13() && f13.subgroupSizeControl && p13.minSubgroupSize > 0) {
    for (uint32_t w = p13.minSubgroupSize; w <= p13.maxSubgroupSize; w *= 2) s.push_back(w);
  } else if (p11.subgroupSize > 0) {
    s.push_back(p11.subgroupSize);
  }
  return s;
}

DeviceInfo describe(const Physical& p, size_t index) {
  const auto& pr = p.props.properties;
  DeviceInfo info;
  info.id = fmt::format("vulkan:{}", index);
  info.name = pr.deviceName;
  info.vendor = vendor_name(pr.vendorID);
  switch (pr.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info.type = "gpu"; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: info.type = "cpu"; break;
    default: info.type = "other";
  }
  info.api = fmt::format("Vulkan {}.{}.{}", VK_API_VERSION_MAJOR(pr.apiVersion), VK_API_VERSION_MINOR(pr.apiVersion),
                         VK_API_VERSION_PATCH(pr.apiVersion));
  info.driver_version = p.p12.driverInfo[0] ? std::string(p.p12.driverInfo) : fmt::format("{}", pr.driverVersion);
  info.platform = std::string("Vulkan ") + p.p12.driverName;
  info.uuid = uuid_text(p.p11.deviceUUID);
  if (p.has(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME))
    info.pci_address =
        fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.pci.pciDomain, p.pci.pciBus, p.pci.pciDevice, p.pci.pciFunction);
  if (p.has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    info.compute_units = p.nv_sm.shaderSMCount;
  } else if (p.has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    info.compute_units =
        p.amd.shaderEngineCount * p.amd.shaderArraysPerEngineCount * p.amd.computeUnitsPerShaderArray;
#ifdef VK_ARM_shader_core_builtins
  } else if (p.has(VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME)) {
    info.compute_units = p.arm.shaderCoreCount;
#endif
  } else if (p.p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) {
    // lavapipe runs work-groups on a pool of LP_NUM_THREADS host threads (0:
    // on the submitting thread), by default one per online CPU; Vulkan has
    // no property for it. Not capped at llvmpipe's compile-time LP_MAX_THREADS.
    const char* env = std::getenv("LP_NUM_THREADS");
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    info.compute_units = static_cast<uint32_t>(std::max(1L, env ? std::strtol(env, nullptr, 10) : cpus));
    info.vendor_info["lp_threads_from"] = env ? "LP_NUM_THREADS" : "online CPUs (sysconf)";
  }
  uint64_t heap = 0;
  for (uint32_t i = 0; i < p.mem.memoryHeapCount; ++i)
    if (p.mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      heap = std::max<uint64_t>(heap, p.mem.memoryHeaps[i].size);
  info.global_mem_bytes = heap;
  info.max_alloc_bytes = p.max_buffer_bytes();
  info.local_mem_bytes = p.limits().maxComputeSharedMemorySize;
  info.local_mem_dedicated = info.type == "gpu";
  info.address_bits = 64;
  info.max_work_group_size =
      std::min<uint64_t>(p.limits().maxComputeWorkGroupInvocations, p.limits().maxComputeWorkGroupSize[0]);
  info.profiling = p.limits().timestampComputeAndGraphics || p.timestamp_bits > 0;
  info.extensions.assign(p.exts.begin(), p.exts.end());

  DeviceFeatures& f = info.features;
  f.fp64 = p.f.features.shaderFloat64;
  f.fp16 = p.f12.shaderFloat16 && p.f11.storageBuffer16BitAccess;
  f.int64_atomics = p.f12.shaderBufferInt64Atomics;
  f.integer_dot_product = p.v13() && p.f13.shaderIntegerDotProduct;
  f.images = p.images.offered();
  for (uint32_t i = 0; i < p.mem.memoryTypeCount; ++i)
    if (p.mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) f.host_mapping = true;
  f.subgroup_sizes = p.subgroup_sizes();
  f.subgroup_size_control = p.v13() && p.f13.subgroupSizeControl &&
                            (p.p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  f.cycle_counter = p.clock_ext() && p.clock.shaderSubgroupClock;
  f.matrix_shapes = p.matrix_shapes;
  // llvmpipe (gallivm) ends every invocation's loops after 65535 iterations
  // in all (LP_MAX_TGSI_LOOP_ITERATIONS, shared by all loops of a shader).
  if (p.p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) f.max_loop_trips = 65535;
  f.inline_asm = "";

  nlohmann::json& v = info.vendor_info;
  v["vk_driver_name"] = p.p12.driverName;
  v["vk_driver_id"] = static_cast<int>(p.p12.driverID);
  v["vk_subgroup_size"] = p.p11.subgroupSize;
  if (p.v13()) {
    v["vk_min_subgroup_size"] = p.p13.minSubgroupSize;
    v["vk_max_subgroup_size"] = p.p13.maxSubgroupSize;
  }
  v["vk_timestamp_period_ns"] = p.limits().timestampPeriod;
  if (p.coop_khr() || p.coop_nv_only()) v["vk_cooperative_matrix"] = p.coop_khr() ? "khr" : "nv";
  if (!p.matrix_left_out.empty()) v["vk_matrix_shapes_left_out"] = p.matrix_left_out;
  v["vk_timestamp_valid_bits"] = p.timestamp_bits;
  v["vk_max_storage_buffer_range"] = p.limits().maxStorageBufferRange;
  v["vk_max_push_constants_size"] = p.limits().maxPushConstantsSize;
  v["vk_buffer_device_address"] = p.bda();
  v["vk_shader_device_clock"] = p.clock_ext() && p.clock.shaderDeviceClock;
  if (p.has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) v["nv_warps_per_sm"] = p.nv_sm.shaderWarpsPerSM;
  const auto& il = p.images.limits;
  std::string forms;
  if (il.max_buffer_pixels > 0) forms = fmt::format("uniform texel buffers of {} pixels", il.max_buffer_pixels);
  if (il.max_2d_width > 0)
    forms += fmt::format("{}sampled 2D images of {}x{}", forms.empty() ? "" : ", ", il.max_2d_width,
                         il.max_2d_height);
  info.driver.push_back(vulkan_shader_core_snapshot(shader_core_properties(p)));
  v["vk_graphics"] = p.graphics.summary;
  v["vk_images"] = p.images.offered() ? "R32G32B32A32_UINT as " + forms
                                      : std::string("none: R32G32B32A32_UINT is neither a uniform texel buffer "
                                                    "format nor a sampled 2D image format that transfers write");
  return printable(std::move(info));
}

}  // namespace gpuscope::vulkan
