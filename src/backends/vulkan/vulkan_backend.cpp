#include "backends/vulkan/vulkan_backend.hpp"

#include "backends/kernel_defines.hpp"
#include "backends/vulkan/calibrated_timestamps.hpp"
#include "backends/vulkan/vulkan_glsl.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "kernels/kernel_sources.hpp"

#include <volk.h>

#include "backends/vulkan/cooperative_matrix.hpp"
#include "kernels/vulkan/matrix_spirv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope {
namespace {

std::atomic<size_t> g_validation_messages{0};

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult";
  }
}

[[noreturn]] void fail(VkResult r, const std::string& what) {
  const std::string msg = fmt::format("{}: {} ({})", what, result_name(r), static_cast<int>(r));
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_TOO_MANY_OBJECTS)
    throw OutOfResources(msg);
  throw DeviceError(msg);
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) fail(r, what);
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++g_validation_messages;
  std::fprintf(stderr, "gpuscope: Vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "(no text)");
  return VK_FALSE;
}

bool validation_requested() {
  const char* layers = std::getenv("VK_INSTANCE_LAYERS");
  return layers && std::strstr(layers, "VK_LAYER_KHRONOS_validation");
}

// The process's Vulkan instance: the loader opened once, the instance
// created once and kept until exit (destroying it from a static destructor
// would race the layers' own teardown).
struct Instance {
  bool usable = false;
  std::string status;  // the loader and instance, or why there is none
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api = 0;    // the instance version asked for
  std::vector<VkPhysicalDevice> physical;

  Instance() {
    if (volkInitialize() != VK_SUCCESS) {
      status = "absent: no Vulkan loader (libvulkan.so.1 could not be opened)";
      return;
    }
    uint32_t loader = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader);
    if (loader < VK_API_VERSION_1_1) {
      status = fmt::format("absent: the Vulkan loader is {}.{}, gpuscope needs 1.1 or newer",
                           VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader));
      return;
    }
    api = std::min<uint32_t>(loader, VK_API_VERSION_1_3);
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> props(n);
    vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data());
    std::set<std::string> have;
    for (const auto& p : props) have.insert(p.extensionName);
    std::vector<const char*> exts;
    const bool debug = validation_requested() && have.count(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkInstanceCreateFlags flags = 0;
    if (have.count(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {  // MoltenVK lists its devices only then
      exts.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
      flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gpuscope";
    app.apiVersion = api;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.flags = flags;
    ci.pApplicationInfo = &app;
    ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
    ci.ppEnabledExtensionNames = exts.data();
    VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    dbg.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    // Not GENERAL: the loader reports there that it added the layer.
    dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    dbg.pfnUserCallback = on_validation;
    if (debug) ci.pNext = &dbg;  // also reports on vkCreateInstance itself
    const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
    if (r != VK_SUCCESS) {
      status = fmt::format("absent: vkCreateInstance failed with {}{}", result_name(r),
                           r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver, ICD, was found)" : "");
      instance = VK_NULL_HANDLE;
      return;
    }
    volkLoadInstance(instance);
    if (debug) {
      VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
      vkCreateDebugUtilsMessengerEXT(instance, &dbg, nullptr, &messenger);
    }
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    physical.resize(count);
    vkEnumeratePhysicalDevices(instance, &count, physical.data());
    physical.resize(count);
    usable = true;
    status = fmt::format("Vulkan loader {}.{}.{} (libvulkan.so.1 through volk), {} physical device(s){}",
                         VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader), VK_API_VERSION_PATCH(loader),
                         count, debug ? ", Khronos validation on" : "");
  }
};

Instance& vk_instance() {
  static Instance* instance = new Instance();  // never destroyed: see Instance
  return *instance;
}

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
  uint32_t timestamp_bits = 0;

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

  explicit Physical(VkPhysicalDevice d, uint32_t instance_api) : pd(d) {
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
#ifdef VK_ARM_shader_core_builtins
    if (has(VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME)) chain(arm);
#endif
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

    uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qs(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qs.data());
    for (uint32_t i = 0; i < qn; ++i) {
      if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qs[i].timestampValidBits > 0) {
        queue_family = i;
        timestamp_bits = qs[i].timestampValidBits;
        break;
      }
    }
  }

  // Headers before 1.3.255 lack the KHR entry point, so it is looked up by
  // name; the NV one volk loads.
  void list_matrix_shapes() {
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

  // Why gpuscope cannot use the device; empty when it can.
  std::string unusable() const {
    if (api < VK_API_VERSION_1_2)
      return fmt::format("Vulkan {}.{} (gpuscope needs 1.2)", VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
    if (!queue_family) return "no compute queue with timestamps";
    return "";
  }

  // Largest single buffer a shader can address through one descriptor.
  uint64_t max_buffer_bytes() const {
    uint64_t m = p11.maxMemoryAllocationSize;
    m = std::min<uint64_t>(m, limits().maxStorageBufferRange);
    if (v13()) m = std::min<uint64_t>(m, p13.maxBufferSize);
    return m & ~uint64_t{255};
  }

  std::vector<uint32_t> subgroup_sizes() const {
    std::vector<uint32_t> s;
    if (v13() && f13.subgroupSizeControl && p13.minSubgroupSize > 0) {
      for (uint32_t w = p13.minSubgroupSize; w <= p13.maxSubgroupSize; w *= 2) s.push_back(w);
    } else if (p11.subgroupSize > 0) {
      s.push_back(p11.subgroupSize);
    }
    return s;
  }
};

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
  f.images = false;  // the Vulkan backend has no ImageFacet yet
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
  return printable(std::move(info));
}

// --- device objects ---------------------------------------------------------

struct Memory {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkMemoryPropertyFlags flags = 0;
  size_t bytes = 0;
  void* mapped = nullptr;  // persistently mapped host-visible memory, else null
};

class VkDev;

class VkBuf final : public Buffer {
 public:
  VkBuf(VkDev& dev, Memory m, uint64_t address) : dev_(dev), mem(m), address(address) {}
  ~VkBuf() override;
  size_t size_bytes() const override { return mem.bytes; }
  VkDev& dev_;
  Memory mem;
  uint64_t address = 0;    // device address; 0 without bufferDeviceAddress
  Memory shadow;           // host-visible twin for timed_map on memory the host cannot map
};

class VkPinnedHost final : public HostStaging {
 public:
  VkPinnedHost(VkDev& dev, Memory m) : dev_(dev), mem(m) {}
  ~VkPinnedHost() override;
  std::span<std::byte> bytes() override { return {static_cast<std::byte*>(mem.mapped), mem.bytes}; }
  VkDev& dev_;
  Memory mem;
};

struct Pipe {
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class VkKern final : public Kernel {
 public:
  VkKern(std::string name, GlslShader shader, size_t max_wg)
      : shader(std::move(shader)), name_(std::move(name)), max_wg_(max_wg) {}
  const std::string& name() const override { return name_; }
  size_t max_work_group_size() const override { return max_wg_; }
  GlslShader shader;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::map<std::array<uint32_t, 4>, VkPipeline> pipelines;  // by (local x, y, z, local words)
  std::array<uint32_t, 4> last_config{0, 0, 0, 0};
  uint32_t required_subgroup_size = 0;  // the spec's required_subgroup_size; 0: the driver's choice

 private:
  std::string name_;
  size_t max_wg_;
};

double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

constexpr uint32_t kPushBytes = 128;  // the push-constant range every pipeline layout declares
constexpr uint32_t kMaxBindings = 64;
constexpr size_t kStagingBytes = size_t{64} << 20;

class VkDev final : public Device, public HostTransferFacet {
 public:
  VkDev(std::unique_ptr<Physical> phys, DeviceInfo info) : p_(std::move(phys)), info_(std::move(info)) {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = *p_->queue_family;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    // Every feature the device has, except the bounds checks that would slow
    // every access down (robustBufferAccess, robustImageAccess).
    p_->f.features.robustBufferAccess = VK_FALSE;
    if (p_->v13()) p_->f13.robustImageAccess = VK_FALSE;
    std::vector<const char*> exts;
    for (const char* e : {VK_KHR_SHADER_CLOCK_EXTENSION_NAME, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME,
                          "VK_KHR_portability_subset"})
      if (p_->has(e)) exts.push_back(e);
    if (p_->coop_ext()) exts.push_back(p_->coop_ext());
    const char* calibrated = vulkan::calibrated_timestamps_extension(p_->exts);
    if (calibrated) exts.push_back(calibrated);
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.pNext = &p_->f;
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
    ci.ppEnabledExtensionNames = exts.data();
    check(vkCreateDevice(p_->pd, &ci, nullptr, &dev_), "vkCreateDevice");
    calibrated_ = std::make_unique<vulkan::CalibratedTimestamps>(volkGetLoadedInstance(), p_->pd, dev_, calibrated);
    vkGetDeviceQueue(dev_, *p_->queue_family, 0, &queue_);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = *p_->queue_family;
    check(vkCreateCommandPool(dev_, &pci, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(dev_, &ai, &cb_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(dev_, &fi, nullptr, &fence_), "vkCreateFence");
    VkDescriptorPoolSize sizes{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxBindings};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &sizes;
    check(vkCreateDescriptorPool(dev_, &dpi, nullptr, &desc_pool_), "vkCreateDescriptorPool");
    const uint32_t bits = p_->timestamp_bits;
    ts_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    ts_period_ = p_->limits().timestampPeriod;
  }

  ~VkDev() override {
    vkDeviceWaitIdle(dev_);
    for (auto& [key, k] : kernels_) {
      for (auto& [cfg, pipe] : k->pipelines) vkDestroyPipeline(dev_, pipe, nullptr);
      vkDestroyPipelineLayout(dev_, k->layout, nullptr);
      vkDestroyDescriptorSetLayout(dev_, k->set_layout, nullptr);
      vkDestroyShaderModule(dev_, k->module, nullptr);
    }
    free_memory(staging_);
    if (queries_) vkDestroyQueryPool(dev_, queries_, nullptr);
    vkDestroyDescriptorPool(dev_, desc_pool_, nullptr);
    vkDestroyFence(dev_, fence_, nullptr);
    vkDestroyCommandPool(dev_, pool_, nullptr);
    vkDestroyDevice(dev_, nullptr);
  }

  const DeviceInfo& info() const override { return info_; }
  HostTransferFacet* host_transfers() override { return this; }

  // --- memory ---------------------------------------------------------------

  // A buffer in the first memory type that has all of `want` (then, among
  // those, prefers `prefer`); nullopt when no type has `want`.
  std::optional<Memory> allocate(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                                 VkMemoryPropertyFlags prefer = 0) {
    Memory m;
    m.bytes = bytes;
    const bool address = p_->bda() && (usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes;
    bi.usage = usage | (address ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0);
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(dev_, &bi, nullptr, &m.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev_, m.buffer, &req);
    std::optional<uint32_t> type;
    for (int pass = 0; pass < 2 && !type; ++pass) {
      const VkMemoryPropertyFlags need = pass == 0 ? want | prefer : want;
      for (uint32_t i = 0; i < p_->mem.memoryTypeCount && !type; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (p_->mem.memoryTypes[i].propertyFlags & need) == need) type = i;
    }
    if (!type) {
      vkDestroyBuffer(dev_, m.buffer, nullptr);
      return std::nullopt;
    }
    m.flags = p_->mem.memoryTypes[*type].propertyFlags;
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mi.pNext = address ? &flags : nullptr;
    mi.allocationSize = req.size;
    mi.memoryTypeIndex = *type;
    if (const VkResult r = vkAllocateMemory(dev_, &mi, nullptr, &m.memory); r != VK_SUCCESS) {
      vkDestroyBuffer(dev_, m.buffer, nullptr);
      throw OutOfResources(fmt::format("allocating {} bytes: {}", bytes, result_name(r)));
    }
    check(vkBindBufferMemory(dev_, m.buffer, m.memory, 0), "vkBindBufferMemory");
    if (m.flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      check(vkMapMemory(dev_, m.memory, 0, VK_WHOLE_SIZE, 0, &m.mapped), "vkMapMemory");
    return m;
  }

  void free_memory(Memory& m) {
    if (m.mapped) vkUnmapMemory(dev_, m.memory);
    if (m.buffer) vkDestroyBuffer(dev_, m.buffer, nullptr);
    if (m.memory) vkFreeMemory(dev_, m.memory, nullptr);
    m = Memory{};
  }

  static constexpr VkBufferUsageFlags kStorage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  static constexpr VkBufferUsageFlags kTransfer = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  static constexpr VkMemoryPropertyFlags kHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

  std::unique_ptr<VkBuf> make_buffer(size_t bytes, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
    if (bytes == 0 || bytes > info_.max_alloc_bytes)
      throw OutOfResources(fmt::format("{} bytes exceeds the device's largest storage buffer of {} bytes", bytes,
                                       info_.max_alloc_bytes));
    auto m = allocate(bytes, kStorage, want, prefer);
    if (!m) throw OutOfResources(fmt::format("no memory type for a {}-byte storage buffer", bytes));
    uint64_t address = 0;
    if (p_->bda()) {
      VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
      ai.buffer = m->buffer;
      address = vkGetBufferDeviceAddress(dev_, &ai);
    }
    return std::make_unique<VkBuf>(*this, *m, address);
  }

  std::unique_ptr<Buffer> create_buffer(size_t bytes) override {
    return make_buffer(bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  }

  Memory& staging(size_t want) {
    want = std::min(std::max<size_t>(want, size_t{1} << 20), kStagingBytes);
    if (staging_.bytes < want) {
      free_memory(staging_);
      auto m = allocate(want, kTransfer, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      if (!m) throw DeviceError("the device has no host-visible coherent memory for staging");
      staging_ = *m;
    }
    return staging_;
  }

  // Records `record` into the command buffer, submits it, waits (spinning
  // when `spin`, else blocking in the driver); returns the host time from
  // submission to the wait's end.
  template <class Record>
  double submit(Record record, bool spin = false) {
    check(vkResetCommandBuffer(cb_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer");
    // Earlier submissions' writes are visible to everything that follows.
    barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    record(cb_);
    // ... and this one's to the host.
    barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_;
    const auto t0 = std::chrono::steady_clock::now();
    submit_host_ns_ = calibrated_->usable() ? calibrated_->host_now_ns() : 0;
    check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    if (spin) {
      VkResult r;
      while ((r = vkGetFenceStatus(dev_, fence_)) == VK_NOT_READY) {
      }
      check(r, "waiting for the device");
    } else {
      check(vkWaitForFences(dev_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    }
    const double host_ns = ns_since(t0);
    check(vkResetFences(dev_, 1, &fence_), "vkResetFences");
    return host_ns;
  }

  void barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
               VkAccessFlags dst_access) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = src_access;
    b.dstAccessMask = dst_access;
    vkCmdPipelineBarrier(cb_, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  // The timestamp query pool, at least `n` queries, reset inside the
  // command buffer being recorded.
  void reset_queries(VkCommandBuffer cb, uint32_t n) {
    if (n > query_count_) {
      if (queries_) vkDestroyQueryPool(dev_, queries_, nullptr);
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = std::max<uint32_t>(n, 64);
      check(vkCreateQueryPool(dev_, &qi, nullptr, &queries_), "vkCreateQueryPool");
      query_count_ = qi.queryCount;
    }
    vkCmdResetQueryPool(cb, queries_, 0, n);
  }

  // Ticks of queries [0, n), as read after the submission finished.
  std::vector<uint64_t> read_queries(uint32_t n) {
    std::vector<uint64_t> t(n);
    check(vkGetQueryPoolResults(dev_, queries_, 0, n, n * sizeof(uint64_t), t.data(), sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    return t;
  }

  double ticks_ns(uint64_t from, uint64_t to) const {
    return static_cast<double>((to - from) & ts_mask_) * static_cast<double>(ts_period_);
  }

  // Copies between buffers, timed by a pair of timestamps; the device ns.
  double copy(VkBuffer src, size_t src_off, VkBuffer dst, size_t dst_off, size_t bytes, bool spin,
              double* host_ns = nullptr) {
    const double h = submit(
        [&](VkCommandBuffer cb) {
          reset_queries(cb, 2);
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
          VkBufferCopy region{src_off, dst_off, bytes};
          vkCmdCopyBuffer(cb, src, dst, 1, &region);
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
        },
        spin);
    if (host_ns) *host_ns = h;
    const auto t = read_queries(2);
    return ticks_ns(t[0], t[1]);
  }

  static VkBuf& as_vk(Buffer& b) { return static_cast<VkBuf&>(b); }
  static const VkBuf& as_vk(const Buffer& b) { return static_cast<const VkBuf&>(b); }

  void check_range(const Buffer& b, size_t offset, size_t bytes, const char* what) const {
    if (offset + bytes > b.size_bytes())
      throw DeviceError(fmt::format("{}: {} bytes at offset {} exceed the {}-byte buffer", what, bytes, offset,
                                    b.size_bytes()));
  }

  void write(Buffer& dst, size_t offset, std::span<const std::byte> src) override {
    check_range(dst, offset, src.size(), "writing a buffer");
    Memory& st = staging(src.size());
    for (size_t done = 0; done < src.size();) {
      const size_t n = std::min(st.bytes, src.size() - done);
      std::memcpy(st.mapped, src.data() + done, n);
      copy(st.buffer, 0, as_vk(dst).mem.buffer, offset + done, n, false);
      done += n;
    }
  }

  void read(const Buffer& src, size_t offset, std::span<std::byte> dst) override {
    check_range(src, offset, dst.size(), "reading a buffer");
    Memory& st = staging(dst.size());
    for (size_t done = 0; done < dst.size();) {
      const size_t n = std::min(st.bytes, dst.size() - done);
      copy(as_vk(src).mem.buffer, offset + done, st.buffer, 0, n, false);
      std::memcpy(dst.data() + done, st.mapped, n);
      done += n;
    }
  }

  // --- kernels --------------------------------------------------------------

  std::string preamble() const {
    std::string s = "#version 450\n";
    s += "#extension GL_EXT_shader_explicit_arithmetic_types : enable\n";
    s += "#extension GL_EXT_control_flow_attributes : enable\n";
    s += "#extension GL_KHR_shader_subgroup_basic : enable\n";
    const bool bda = p_->bda();
    const bool sclock = p_->clock_ext() && p_->clock.shaderSubgroupClock;
    const bool dclock = p_->clock_ext() && p_->clock.shaderDeviceClock;
    if (bda) s += "#extension GL_EXT_buffer_reference : enable\n#extension GL_EXT_buffer_reference2 : enable\n";
    if (sclock) s += "#extension GL_ARB_shader_clock : enable\n";
    if (dclock) s += "#extension GL_EXT_shader_realtime_clock : enable\n";
    auto def = [&s](const char* name, bool v) { s += fmt::format("#define {} {}\n", name, v ? 1 : 0); };
    def("HAS_BUFFER_ADDRESS", bda);
    def("HAS_INT64", p_->f.features.shaderInt64);
    def("HAS_FLOAT64", p_->f.features.shaderFloat64);
    def("HAS_FLOAT16", p_->f12.shaderFloat16 && p_->f11.storageBuffer16BitAccess);
    def("HAS_INT8", p_->f12.shaderInt8 && p_->f12.storageBuffer8BitAccess);
    def("HAS_INT16", p_->f.features.shaderInt16 && p_->f11.storageBuffer16BitAccess);
    def("HAS_SUBGROUP_CLOCK", sclock);
    def("HAS_DEVICE_CLOCK", dclock);
    return s;
  }

  static std::string_view glsl_type_name(Scalar s) {
    switch (s) {
      case Scalar::i8: return "int8_t";
      case Scalar::i16: return "int16_t";
      case Scalar::i32: return "int";
      case Scalar::i64: return "int64_t";
      case Scalar::u32: return "uint";
      case Scalar::u64: return "uint64_t";
      case Scalar::f16: return "float16_t";
      case Scalar::f32: return "float";
      case Scalar::f64: return "double";
    }
    return "?";
  }

  Kernel& kernel(const KernelSpec& spec) override {
    const std::string key = spec.key();
    if (auto it = kernels_.find(key); it != kernels_.end()) return *it->second;
    if (spec.family == "matrix") return build(spec, key, matrix_shader(spec));
    const std::string path = "vulkan/" + spec.family + ".comp";
    const KernelSource* src = find_kernel_source(path);
    if (!src) throw Unsupported("the Vulkan backend has no shader for kernel family '" + spec.family + "'");
    std::string text = preamble();
    text += "#define ENTRY_" + macro_name(spec.entry) + " 1\n";
    for (const auto& [name, value] : kernel_defines(spec, glsl_type_name))
      text += "#define " + name + " " + value + "\n";
    text += "#line 1\n";
    text += src->text;
    const int minor = static_cast<int>(VK_API_VERSION_MINOR(p_->api));
    return build(spec, key, compile_glsl_compute(text, key, minor));
  }

  // The matrix family is SPIR-V written by C++ (kernels/vulkan/matrix_spirv.hpp):
  // no GLSL compiler here knows GL_KHR_cooperative_matrix.
  GlslShader matrix_shader(const KernelSpec& spec) const {
    if (spec.entry != "chain") throw Unsupported("the matrix family has no entry '" + spec.entry + "'");
    if (!p_->coop_khr() && !p_->coop_nv_only())
      throw Unsupported("the device has no cooperative matrices (VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix)");
    std::string why;
    const auto word = [&](const char* name) { return spec.word(name).value_or(""); };
    const auto shape = matrix_chain_shape(word("a"), word("b"), word("c"), word("result"),
                                          static_cast<uint32_t>(spec.integer("m", 0)),
                                          static_cast<uint32_t>(spec.integer("n", 0)),
                                          static_cast<uint32_t>(spec.integer("k", 0)), &why);
    if (!shape) throw Unsupported("matrix: " + why);
    GlslShader g;
    g.spirv = vulkan::matrix_chain_spirv(*shape, static_cast<uint32_t>(spec.integer("chains", 1)),
                                         p_->coop_khr() ? vulkan::CoopMatrixFlavour::khr : vulkan::CoopMatrixFlavour::nv,
                                         spec.flag("saturating"));
    g.buffer_bindings = {0, 1, 2, 3, 4};
    return g;
  }

  // Creates the module, set layout and pipeline layout of `spec`'s shader,
  // cached under `key`.
  Kernel& build(const KernelSpec& spec, const std::string& key, GlslShader shader) {
    for (uint32_t b : shader.buffer_bindings)
      if (b >= kMaxBindings) throw BuildError(fmt::format("{}: binding {} over {}", key, b, kMaxBindings - 1), "");

    // required_subgroup_size: the pipeline is created for that wave width
    // (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo), one the device
    // lists; its work-groups hold at most maxComputeWorkgroupSubgroups waves.
    const int64_t required = spec.integer("required_subgroup_size", 0);
    size_t max_wg = info_.max_work_group_size;
    if (required != 0) {
      const auto& sizes = info_.features.subgroup_sizes;
      if (!info_.features.subgroup_size_control ||
          std::find(sizes.begin(), sizes.end(), static_cast<uint32_t>(required)) == sizes.end())
        throw Unsupported(fmt::format("{}: the device cannot run compute shaders at subgroup size {}", key, required));
      max_wg = std::min<size_t>(max_wg, size_t{p_->p13.maxComputeWorkgroupSubgroups} * static_cast<size_t>(required));
    }
    auto k = std::make_unique<VkKern>(spec.entry, std::move(shader), max_wg);
    k->required_subgroup_size = static_cast<uint32_t>(required);
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = k->shader.spirv.size() * sizeof(uint32_t);
    mi.pCode = k->shader.spirv.data();
    check(vkCreateShaderModule(dev_, &mi, nullptr, &k->module), "vkCreateShaderModule");
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t b : k->shader.buffer_bindings)
      bindings.push_back({b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = static_cast<uint32_t>(bindings.size());
    li.pBindings = bindings.data();
    check(vkCreateDescriptorSetLayout(dev_, &li, nullptr, &k->set_layout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &k->set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(dev_, &pli, nullptr, &k->layout), "vkCreatePipelineLayout");
    auto& ref = *k;
    kernels_.emplace(key, std::move(k));
    return ref;
  }

  VkPipeline pipeline(VkKern& k, std::array<uint32_t, 4> cfg) {
    if (auto it = k.pipelines.find(cfg); it != k.pipelines.end()) return it->second;
    const VkSpecializationMapEntry entries[4] = {
        {0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
    VkSpecializationInfo spec{4, entries, sizeof(cfg), cfg.data()};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;  // launches of many groups are split (dispatch())
    if (p_->exe_ext() && p_->exe.pipelineExecutableInfo) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = k.module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec;
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rs{
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
    if (k.required_subgroup_size != 0) {
      rs.requiredSubgroupSize = k.required_subgroup_size;
      ci.stage.pNext = &rs;
    }
    ci.layout = k.layout;
    VkPipeline pipe = VK_NULL_HANDLE;
    const VkResult r = vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &ci, nullptr, &pipe);
    if (r != VK_SUCCESS)
      fail(r, fmt::format("creating the pipeline of {} for groups of {}x{}x{} with {} local words", k.name(), cfg[0],
                          cfg[1], cfg[2], cfg[3]));
    k.pipelines.emplace(cfg, pipe);
    return pipe;
  }

  KernelResources kernel_resources(Kernel& kernel) override {
    auto& k = static_cast<VkKern&>(kernel);
    KernelResources r;
    r.max_work_group_size = k.max_work_group_size();
    r.preferred_work_group_multiple = p_->p11.subgroupSize;
    r.code_bytes = k.shader.spirv.size() * sizeof(uint32_t);
    r.code_format = "spirv";
    if (!(p_->exe_ext() && p_->exe.pipelineExecutableInfo)) return r;
    std::array<uint32_t, 4> cfg = k.last_config;
    if (cfg[0] == 0) cfg = {std::min<uint32_t>(64, static_cast<uint32_t>(k.max_work_group_size())), 1, 1, 1};
    VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = pipeline(k, cfg);
    uint32_t n = 0;
    if (vkGetPipelineExecutablePropertiesKHR(dev_, &pi, &n, nullptr) != VK_SUCCESS || n == 0) return r;
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pi.pipeline;
    ei.executableIndex = 0;
    uint32_t m = 0;
    if (vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &m, nullptr) != VK_SUCCESS) return r;
    std::vector<VkPipelineExecutableStatisticKHR> stats(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &m, stats.data()) != VK_SUCCESS) return r;
    // NVIDIA names it "Register Count", RADV "VGPRs", ANV "GRF registers":
    // the per-lane register file use, where the driver gives one.
    for (const auto& s : stats) {
      std::string name = s.name;
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const bool regs = lower == "vgprs" || lower.find("register") != std::string::npos;
      if (!regs || r.registers) continue;
      uint64_t v = 0;
      if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) v = s.value.u64;
      else if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) v = static_cast<uint64_t>(s.value.i64);
      else continue;
      r.registers = static_cast<uint32_t>(v);
      r.registers_source = "VK_KHR_pipeline_executable_properties statistic '" + name + "'";
    }
    return r;
  }

  // What a launch needs, checked once for a single launch or a batch.
  struct Prepared {
    VkPipeline pipeline;
    std::array<uint32_t, 3> groups;
    std::vector<std::byte> push;
  };

  Prepared prepare(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args) {
    std::array<uint32_t, 4> cfg{1, 1, 1, 1};
    if (shape.local.total() == 0) {
      uint32_t l = std::min<uint32_t>(64, static_cast<uint32_t>(k.max_work_group_size()));
      while (l > 1 && shape.global.dims[0] % l != 0) l /= 2;
      cfg[0] = l;
    } else {
      for (int d = 0; d < 3; ++d) cfg[d] = static_cast<uint32_t>(shape.local.dims[d]);
    }
    if (shape.local_bytes > info_.local_mem_bytes)
      throw OutOfResources(fmt::format("{}: {} bytes of local memory exceed the device's {}", k.name(),
                                       shape.local_bytes, info_.local_mem_bytes));
    cfg[3] = std::max<uint32_t>(1, static_cast<uint32_t>(shape.local_bytes / 4));
    const auto& lim = p_->limits();
    if (uint64_t{cfg[0]} * cfg[1] * cfg[2] > info_.max_work_group_size || cfg[0] > lim.maxComputeWorkGroupSize[0] ||
        cfg[1] > lim.maxComputeWorkGroupSize[1] || cfg[2] > lim.maxComputeWorkGroupSize[2])
      throw DeviceError(fmt::format("{}: work-group {}x{}x{} exceeds the device's limits", k.name(), cfg[0], cfg[1],
                                    cfg[2]));
    Prepared p;
    for (int d = 0; d < 3; ++d) {
      if (shape.global.dims[d] % cfg[d] != 0)
        throw DeviceError(fmt::format("{}: global size {} is not a multiple of the work-group size {} (dimension {})",
                                      k.name(), shape.global.dims[d], cfg[d], d));
      const size_t g = shape.global.dims[d] / cfg[d];
      // More groups along x than one dispatch takes are split into several
      // dispatches with a base (dispatch()); along y and z they are not.
      if (g > lim.maxComputeWorkGroupCount[d] && (d > 0 || g > uint64_t{UINT32_MAX}))
        throw DeviceError(fmt::format("{}: {} work-groups exceed the device's {} (dimension {})", k.name(), g,
                                      lim.maxComputeWorkGroupCount[d], d));
      p.groups[d] = static_cast<uint32_t>(g);
    }
    // Scalars in order, each aligned to its size, then buffer addresses.
    auto put = [&p](const void* v, size_t n) {
      while (p.push.size() % n) p.push.push_back(std::byte{0});
      const auto* b = static_cast<const std::byte*>(v);
      p.push.insert(p.push.end(), b, b + n);
    };
    for (const auto& a : args) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, Image*>) {
              throw Unsupported("the Vulkan backend has no images yet");
            } else if constexpr (!std::is_same_v<T, Buffer*>) {
              put(&v, sizeof(v));
            }
          },
          a);
    }
    if (p_->bda())
      for (const auto& a : args)
        if (const auto* b = std::get_if<Buffer*>(&a)) put(&as_vk(**b).address, 8);
    while (p.push.size() % 4) p.push.push_back(std::byte{0});
    if (p.push.size() > kPushBytes)
      throw DeviceError(fmt::format("{}: {} bytes of arguments exceed the {} bytes of push constants", k.name(),
                                    p.push.size(), kPushBytes));
    for (uint32_t b : k.shader.buffer_bindings)
      if (b >= args.size() || !std::holds_alternative<Buffer*>(args[b]))
        throw DeviceError(fmt::format("{}: the shader reads binding {}, but argument {} is not a buffer", k.name(), b,
                                      b));
    p.pipeline = pipeline(k, cfg);
    k.last_config = cfg;
    return p;
  }

  VkDescriptorSet bind_buffers(VkKern& k, std::span<const KernelArg> args) {
    check(vkResetDescriptorPool(dev_, desc_pool_, 0), "vkResetDescriptorPool");
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = desc_pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &k.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(vkAllocateDescriptorSets(dev_, &ai, &set), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos;
    infos.reserve(k.shader.buffer_bindings.size());
    std::vector<VkWriteDescriptorSet> writes;
    for (uint32_t b : k.shader.buffer_bindings) {
      const VkBuf& buf = as_vk(*std::get<Buffer*>(args[b]));
      infos.push_back({buf.mem.buffer, 0, VK_WHOLE_SIZE});
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = set;
      w.dstBinding = b;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos.back();
      writes.push_back(w);
    }
    if (!writes.empty())
      vkUpdateDescriptorSets(dev_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    return set;
  }

  // `count` dispatches, each between its own pair of timestamps, in one
  // submission; the device's start and end of each in ticks.
  std::vector<uint64_t> dispatch(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args, int count,
                                 bool spin, double* host_ns) {
    Prepared p = prepare(k, shape, args);
    VkDescriptorSet set = bind_buffers(k, args);
    const auto n = static_cast<uint32_t>(count);
    const double h = submit(
        [&](VkCommandBuffer cb) {
          reset_queries(cb, 2 * n);
          vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
          vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0, nullptr);
          if (!p.push.empty())
            vkCmdPushConstants(cb, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(p.push.size()),
                               p.push.data());
          for (uint32_t i = 0; i < n; ++i) {
            // Launches in order, as an in-order OpenCL queue runs them: each
            // starts after the previous one's writes.
            if (i > 0)
              barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 2 * i);
            const uint32_t piece = p_->limits().maxComputeWorkGroupCount[0];
            for (uint32_t x = 0; x < p.groups[0]; x += std::min(piece, p.groups[0] - x)) {
              const uint32_t gx = std::min(piece, p.groups[0] - x);
              if (x == 0 && gx == p.groups[0])
                vkCmdDispatch(cb, gx, p.groups[1], p.groups[2]);
              else
                vkCmdDispatchBase(cb, x, 0, 0, gx, p.groups[1], p.groups[2]);
            }
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * i + 1);
          }
        },
        spin);
    if (host_ns) *host_ns = h;
    return read_queries(2 * n);
  }

  double launch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args) override {
    auto& k = static_cast<VkKern&>(kernel);
    const auto t = dispatch(k, shape, args, 1, false, nullptr);
    return ticks_ns(t[0], t[1]);
  }

  // Each launch's timestamps of one submission (ticks: start and end of
  // each), relative to the submission where a clock pairing puts the host's
  // vkQueueSubmit call on the device's clock (queued_ns: all launches of a
  // batch are queued by that one call), else to the first start.
  std::vector<EventTimes> batch_events(const std::vector<uint64_t>& t, int count,
                                       const vulkan::ClockPairing* pairing) const {
    double origin = 0;  // ns after the first start
    if (pairing) origin = vulkan::host_on_device_ns(*pairing, submit_host_ns_, t[0], ts_period_, ts_mask_);
    std::vector<EventTimes> events;
    for (int i = 0; i < count; ++i) {
      EventTimes e;
      e.start_ns = ticks_ns(t[0], t[2 * i]) - origin;
      e.end_ns = ticks_ns(t[0], t[2 * i + 1]) - origin;
      if (pairing) {
        e.queued_ns = 0;
        e.queued_deviation_ns = static_cast<double>(pairing->max_deviation_ns);
      }
      events.push_back(e);
    }
    return events;
  }

  LaunchBatch launch_batch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override {
    auto& k = static_cast<VkKern&>(kernel);
    count = std::max(count, 1);
    LaunchBatch b;
    // Paired before the submission, so that pairing costs no launch time.
    vulkan::ClockPairing pairing;
    if (calibrated_->usable()) pairing = calibrated_->pair();
    const auto t0 = std::chrono::steady_clock::now();
    const auto t = dispatch(k, shape, args, count, true, nullptr);
    b.host_ns = ns_since(t0);
    b.events = batch_events(t, count, calibrated_->usable() ? &pairing : nullptr);
    return b;
  }

  // --- host transfers -------------------------------------------------------

  std::unique_ptr<Buffer> create_host_buffer(size_t bytes) override {
    // Device-local memory the host maps (NVIDIA's BAR window, unified
    // memory on integrated GPUs) where a type offers it, else host memory
    // the device reads over the bus: the Vulkan forms of zero-copy.
    std::unique_ptr<VkBuf> b;
    try {
      b = make_buffer(bytes, kHost | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    } catch (const OutOfResources&) {
      b = make_buffer(bytes, kHost, 0);
    }
    std::memset(b->mem.mapped, 0, bytes);
    return b;
  }

  std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) override {
    auto m = allocate(bytes, kTransfer, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (!m) throw OutOfResources(fmt::format("no host-visible memory for {} pinned bytes", bytes));
    auto pinned = std::make_unique<VkPinnedHost>(*this, *m);
    pinned_.push_back(pinned.get());
    return pinned;
  }

  void forget_pinned(VkPinnedHost* p) { std::erase(pinned_, p); }

  // The pinned allocation holding all of [ptr, ptr + n), if any, and the offset.
  std::optional<std::pair<VkBuffer, size_t>> pinned_at(const std::byte* ptr, size_t n) const {
    for (const VkPinnedHost* p : pinned_) {
      const auto* base = static_cast<const std::byte*>(p->mem.mapped);
      if (ptr >= base && ptr + n <= base + p->mem.bytes)
        return std::make_pair(p->mem.buffer, static_cast<size_t>(ptr - base));
    }
    return std::nullopt;
  }

  // A copy from pinned memory is one device copy; from pageable memory it
  // is the host's copy into staging and then the device's, chunk by chunk.
  TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) override {
    check_range(dst, 0, src.size(), "timed write");
    TransferTiming t;
    const auto t0 = std::chrono::steady_clock::now();
    if (auto pin = pinned_at(src.data(), src.size())) {
      t.device_ns = copy(pin->first, pin->second, as_vk(dst).mem.buffer, 0, src.size(), !blocking);
    } else {
      Memory& st = staging(src.size());
      for (size_t done = 0; done < src.size();) {
        const size_t n = std::min(st.bytes, src.size() - done);
        std::memcpy(st.mapped, src.data() + done, n);
        t.device_ns += copy(st.buffer, 0, as_vk(dst).mem.buffer, done, n, !blocking);
        done += n;
      }
    }
    t.host_ns = ns_since(t0);
    return t;
  }

  TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) override {
    check_range(src, 0, dst.size(), "timed read");
    TransferTiming t;
    const auto t0 = std::chrono::steady_clock::now();
    if (auto pin = pinned_at(dst.data(), dst.size())) {
      t.device_ns = copy(as_vk(src).mem.buffer, 0, pin->first, pin->second, dst.size(), !blocking);
    } else {
      Memory& st = staging(dst.size());
      for (size_t done = 0; done < dst.size();) {
        const size_t n = std::min(st.bytes, dst.size() - done);
        t.device_ns += copy(as_vk(src).mem.buffer, done, st.buffer, 0, n, !blocking);
        std::memcpy(dst.data() + done, st.mapped, n);
        done += n;
      }
    }
    t.host_ns = ns_since(t0);
    return t;
  }

  // Host-visible memory is mapped for real (vkMapMemory); memory the host
  // cannot see goes through a host-visible shadow of the buffer, copied in
  // on a map for reading and out on the unmap after writing, as OpenCL
  // drivers map device memory.
  MapTiming timed_map(Buffer& buffer, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override {
    auto& b = as_vk(buffer);
    MapTiming t;
    const size_t bytes = b.mem.bytes;
    if (b.mem.flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      vkUnmapMemory(dev_, b.mem.memory);  // held mapped; mapped again here so the map is what is timed
      b.mem.mapped = nullptr;
      auto t0 = std::chrono::steady_clock::now();
      void* ptr = nullptr;
      check(vkMapMemory(dev_, b.mem.memory, 0, VK_WHOLE_SIZE, 0, &ptr), "vkMapMemory");
      if (!(b.mem.flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem.memory, 0, VK_WHOLE_SIZE};
        vkInvalidateMappedMemoryRanges(dev_, 1, &r);
      }
      t.map_host_ns = ns_since(t0);
      t0 = std::chrono::steady_clock::now();
      touch({static_cast<std::byte*>(ptr), bytes});
      t.touch_ns = ns_since(t0);
      t0 = std::chrono::steady_clock::now();
      if (!(b.mem.flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem.memory, 0, VK_WHOLE_SIZE};
        vkFlushMappedMemoryRanges(dev_, 1, &r);
      }
      vkUnmapMemory(dev_, b.mem.memory);
      t.unmap_host_ns = ns_since(t0);
      check(vkMapMemory(dev_, b.mem.memory, 0, VK_WHOLE_SIZE, 0, &b.mem.mapped), "vkMapMemory");
      return t;
    }
    if (!b.shadow.buffer) {
      auto m = allocate(bytes, kTransfer, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      if (!m) throw Unsupported("the device has no host-visible memory to map buffers through");
      b.shadow = *m;
    }
    auto t0 = std::chrono::steady_clock::now();
    if (dir == MapDirection::to_host) t.map_device_ns = copy(b.mem.buffer, 0, b.shadow.buffer, 0, bytes, true);
    t.map_host_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    touch({static_cast<std::byte*>(b.shadow.mapped), bytes});
    t.touch_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    if (dir == MapDirection::to_device) t.unmap_device_ns = copy(b.shadow.buffer, 0, b.mem.buffer, 0, bytes, true);
    t.unmap_host_ns = ns_since(t0);
    return t;
  }

  std::unique_ptr<Physical> p_;
  DeviceInfo info_;
  std::unique_ptr<vulkan::CalibratedTimestamps> calibrated_;
  uint64_t submit_host_ns_ = 0;  // the host clock (calibrated_'s) at the last vkQueueSubmit; 0 without it
  VkDevice dev_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkDescriptorPool desc_pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_count_ = 0;
  uint64_t ts_mask_ = 0;
  float ts_period_ = 1;
  Memory staging_;
  std::vector<VkPinnedHost*> pinned_;
  std::map<std::string, std::unique_ptr<VkKern>> kernels_;
};

VkBuf::~VkBuf() {
  dev_.free_memory(shadow);
  dev_.free_memory(mem);
}

VkPinnedHost::~VkPinnedHost() {
  dev_.forget_pinned(this);
  dev_.free_memory(mem);
}

class VkBackendImpl final : public Backend {
 public:
  std::string name() const override { return "vulkan"; }

  std::string availability() const override {
    Instance& in = vk_instance();
    if (!in.usable) return in.status;
    std::string s = in.status;
    for (size_t i = 0; i < in.physical.size(); ++i) {
      Physical p(in.physical[i], in.api);
      if (const std::string why = p.unusable(); !why.empty())
        s += fmt::format("; {} not used: {}", p.props.properties.deviceName, why);
    }
    return s;
  }

  std::vector<DeviceInfo> enumerate() override {
    std::vector<DeviceInfo> out;
    for (auto& [index, p] : usable()) out.push_back(describe(*p, index));
    return out;
  }

  std::unique_ptr<Device> open(const std::string& id) override {
    size_t want = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "vulkan:%zu%c", &want, &tail) != 1)
      throw UsageError("unknown Vulkan device '" + id + "'");
    for (auto& [index, p] : usable()) {
      if (index != want) continue;
      DeviceInfo info = describe(*p, index);
      return std::make_unique<VkDev>(std::move(p), std::move(info));
    }
    throw UsageError("unknown Vulkan device '" + id + "'");
  }

 private:
  // Usable devices, numbered in the loader's order counting only those.
  static std::vector<std::pair<size_t, std::unique_ptr<Physical>>> usable() {
    std::vector<std::pair<size_t, std::unique_ptr<Physical>>> out;
    Instance& in = vk_instance();
    if (!in.usable) return out;
    for (VkPhysicalDevice pd : in.physical) {
      auto p = std::make_unique<Physical>(pd, in.api);
      if (p->unusable().empty()) out.emplace_back(out.size(), std::move(p));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend() { return std::make_unique<VkBackendImpl>(); }

size_t vulkan_validation_messages() { return g_validation_messages.load(); }

}  // namespace gpuscope
