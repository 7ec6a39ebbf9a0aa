#include "backends/opencl/opencl_device_info.hpp"

#include "backends/opencl/opencl_library.hpp"
#include "core/device_identity.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <vector>

namespace gpuscope::opencl_detail {

namespace {

// Vendor query tokens, spelled out so that the build does not depend on which
// cl_ext.h the machine has. Values from the Khronos registry.
constexpr cl_device_info kKhrDeviceUuid = 0x106A;   // cl_khr_device_uuid: 16 bytes
constexpr size_t kKhrUuidBytes = 16;
constexpr cl_device_info kKhrPciBusInfo = 0x410F;   // cl_khr_pci_bus_info: KhrPciBusInfo
struct KhrPciBusInfo {
  cl_uint domain, bus, device, function;
};
#ifdef CL_DEVICE_UUID_KHR
static_assert(kKhrDeviceUuid == CL_DEVICE_UUID_KHR && kKhrUuidBytes == CL_UUID_SIZE_KHR);
#endif
#ifdef CL_DEVICE_PCI_BUS_INFO_KHR
static_assert(kKhrPciBusInfo == CL_DEVICE_PCI_BUS_INFO_KHR &&
              sizeof(KhrPciBusInfo) == sizeof(cl_device_pci_bus_info_khr));
#endif
constexpr cl_device_info kNvComputeCapabilityMajor = 0x4000;  // cl_nv_device_attribute_query
constexpr cl_device_info kNvComputeCapabilityMinor = 0x4001;
constexpr cl_device_info kNvRegistersPerBlock = 0x4002;
constexpr cl_device_info kNvWarpSize = 0x4003;
constexpr cl_device_info kNvIntegratedMemory = 0x4006;
constexpr cl_device_info kNvPciBusId = 0x4008;
constexpr cl_device_info kNvPciSlotId = 0x4009;  // device << 3 | function, as hwloc reads it
constexpr cl_device_info kNvPciDomainId = 0x400A;
constexpr cl_device_info kAmdBoardName = 0x4038;  // cl_amd_device_attribute_query
constexpr cl_device_info kAmdSimdPerComputeUnit = 0x4040;
constexpr cl_device_info kAmdWavefrontWidth = 0x4043;
constexpr cl_device_info kArmComputeUnitsBitfield = 0x40BF;  // cl_arm_core_id
constexpr cl_device_info kQcomPageSize = 0x40A1;             // cl_qcom_ext_host_ptr
constexpr cl_device_info kIntelSubGroupSizes = 0x4108;       // cl_intel_required_subgroup_size

std::string device_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  std::sort(out.begin(), out.end());
  return out;
}

// Queries that answer only on some vendors' drivers. A query that fails is
// simply absent: an unknown token must never make listing a device fail.
nlohmann::json vendor_queries(const cl::Device& d, const DeviceInfo& info) {
  nlohmann::json v = nlohmann::json::object();
  if (has_ext(info, "cl_nv_device_attribute_query")) {
    cl_uint major = 0, minor = 0, regs = 0, warp = 0, bus = 0;
    cl_bool integrated = CL_FALSE;
    if (query(d, kNvWarpSize, warp)) v["nv_warp_size"] = warp;
    if (query(d, kNvComputeCapabilityMajor, major) && query(d, kNvComputeCapabilityMinor, minor))
      v["nv_compute_capability"] = fmt::format("{}.{}", major, minor);
    if (query(d, kNvRegistersPerBlock, regs)) v["nv_registers_per_block"] = regs;
    if (query(d, kNvIntegratedMemory, integrated)) v["nv_integrated_memory"] = integrated == CL_TRUE;
    if (query(d, kNvPciBusId, bus)) v["nv_pci_bus_id"] = bus;
  }
  if (has_ext(info, "cl_amd_device_attribute_query")) {
    cl_uint wave = 0, simd = 0;
    if (query(d, kAmdWavefrontWidth, wave)) v["amd_wavefront_width"] = wave;
    if (query(d, kAmdSimdPerComputeUnit, simd)) v["amd_simd_per_compute_unit"] = simd;
    char board[256] = {};
    if (clGetDeviceInfo(d(), kAmdBoardName, sizeof(board) - 1, board, nullptr) == CL_SUCCESS)
      v["amd_board_name"] = std::string(board);
  }
  if (has_ext(info, "cl_arm_core_id")) {
    cl_ulong bits = 0;
    if (query(d, kArmComputeUnitsBitfield, bits)) v["arm_compute_units_bitfield"] = bits;
  }
  if (has_ext(info, "cl_qcom_ext_host_ptr")) {
    size_t page = 0;
    if (query(d, kQcomPageSize, page)) v["qcom_page_size"] = page;
  }
  if (has_ext(info, "cl_intel_required_subgroup_size")) {
    size_t sizes[16] = {};
    size_t bytes = 0;
    if (clGetDeviceInfo(d(), kIntelSubGroupSizes, sizeof(sizes), sizes, &bytes) == CL_SUCCESS)
      v["intel_sub_group_sizes"] = std::vector<size_t>(sizes, sizes + bytes / sizeof(size_t));
  }
  return v;
}

// What identifies the physical device (DeviceInfo::uuid, ::pci_address):
// cl_khr_device_uuid; cl_khr_pci_bus_info, else NVIDIA's attribute query
// (bus, slot and, on newer drivers, domain; domain 0 where it is absent).
// A query that fails leaves the field empty.
void identify(const cl::Device& d, DeviceInfo& info) {
  if (has_ext(info, "cl_khr_device_uuid")) {
    std::array<uint8_t, kKhrUuidBytes> uuid{};
    if (clGetDeviceInfo(d(), kKhrDeviceUuid, uuid.size(), uuid.data(), nullptr) == CL_SUCCESS)
      info.uuid = format_device_uuid(uuid);
  }
  KhrPciBusInfo pci{};
  if (has_ext(info, "cl_khr_pci_bus_info") && query(d, kKhrPciBusInfo, pci)) {
    info.pci_address = format_pci_address(pci.domain, pci.bus, pci.device, pci.function);
  } else if (has_ext(info, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (query(d, kNvPciBusId, bus) && query(d, kNvPciSlotId, slot)) {
      if (!query(d, kNvPciDomainId, domain)) domain = 0;
      info.pci_address = format_pci_address(domain, bus, slot >> 3, slot & 7);
    }
  }
}

// What kernels on `d` may use, from its extensions and queries (`info`
// holds them already).
DeviceFeatures features_of(const cl::Device& d, const DeviceInfo& info) {
  DeviceFeatures f;
  f.fp64 = has_ext(info, "cl_khr_fp64");
  f.fp16 = has_ext(info, "cl_khr_fp16");
  f.int64_atomics = has_ext(info, "cl_khr_int64_base_atomics");
  f.integer_dot_product = has_ext(info, "cl_khr_integer_dot_product");
  f.images = d.getInfo<CL_DEVICE_IMAGE_SUPPORT>() == CL_TRUE;
  f.host_mapping = true;  // clEnqueueMapBuffer is core OpenCL
  cl_device_svm_capabilities svm = 0;
  f.shared_virtual_memory = load_opencl_library().svm &&
                            clGetDeviceInfo(d(), CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, nullptr) ==
                                CL_SUCCESS &&
                            (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
  const nlohmann::json& v = info.vendor_info;
  if (v.contains("nv_warp_size")) f.subgroup_sizes = {v["nv_warp_size"].get<uint32_t>()};
  if (v.contains("intel_sub_group_sizes"))
    for (const auto& n : v["intel_sub_group_sizes"]) f.subgroup_sizes.push_back(n.get<uint32_t>());
  // NVIDIA's OpenCL compiles through PTX and accepts asm statements in it;
  // %clock64 is then each SM's cycle counter, and since Volta (7.0) every
  // machine instruction is 16 bytes.
  if (info.vendor.find("NVIDIA") != std::string::npos) {
    f.inline_asm = "nvidia-ptx";
    if (v.contains("nv_compute_capability")) f.isa_version = std::stod(v["nv_compute_capability"].get<std::string>());
    f.cycle_counter = true;
    if (f.isa_version >= 7) f.instruction_bytes = 16;
  }
  return f;
}

}  // namespace

DeviceInfo describe_device(const cl::Platform& p, const cl::Device& d, size_t pi, size_t di) {
  DeviceInfo info;
  info.id = fmt::format("opencl:{}:{}", pi, di);
  info.name = d.getInfo<CL_DEVICE_NAME>();
  info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
  info.type = device_type_name(d.getInfo<CL_DEVICE_TYPE>());
  info.api = d.getInfo<CL_DEVICE_VERSION>();
  info.driver_version = d.getInfo<CL_DRIVER_VERSION>();
  info.platform = p.getInfo<CL_PLATFORM_NAME>();
  info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.clock_mhz = d.getInfo<CL_DEVICE_MAX_CLOCK_FREQUENCY>();
  info.global_mem_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.max_alloc_bytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.local_mem_bytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.local_mem_dedicated = d.getInfo<CL_DEVICE_LOCAL_MEM_TYPE>() == CL_LOCAL;
  info.global_cache_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  info.global_cache_line_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE>();
  info.address_bits = d.getInfo<CL_DEVICE_ADDRESS_BITS>();
  info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.profiling = (d.getInfo<CL_DEVICE_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE) != 0;
  info.extensions = split_words(d.getInfo<CL_DEVICE_EXTENSIONS>());
  info.vendor_info = vendor_queries(d, info);
  identify(d, info);
  info.features = features_of(d, info);
  if (info.type == "cpu")
    info.vendor_info["gpuscope_buffers"] = "host memory, transparent huge pages requested";
  return printable(std::move(info));  // driver strings reach terminals and reports
}

bool has_ext(const DeviceInfo& info, const std::string& ext) {
  return std::binary_search(info.extensions.begin(), info.extensions.end(), ext);
}

}  // namespace gpuscope::opencl_detail
