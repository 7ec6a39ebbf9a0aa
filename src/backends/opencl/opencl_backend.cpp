#include "backends/opencl/opencl_backend.hpp"

#include "core/device_identity.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "backends/opencl/opencl_build_report.hpp"
#include "backends/opencl/opencl_kernel_source.hpp"
#include "kernels/kernel_sources.hpp"

#include "backends/opencl/opencl_cpp.hpp"
#include "backends/opencl/opencl_library.hpp"

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

namespace gpuscope {
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

bool is_out_of_resources(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

[[noreturn]] void rethrow(const cl::Error& e, const std::string& what) {
  const std::string msg = fmt::format("{}: {} failed with OpenCL error {}", what, e.what(), e.err());
  if (is_out_of_resources(e.err())) throw OutOfResources(msg);
  throw DeviceError(msg);
}

template <class T>
bool query(const cl::Device& d, cl_device_info param, T& out) {
  return clGetDeviceInfo(d(), param, sizeof(T), &out, nullptr) == CL_SUCCESS;
}

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

bool has_ext(const DeviceInfo& info, const std::string& ext) {
  return std::binary_search(info.extensions.begin(), info.extensions.end(), ext);
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

DeviceInfo describe(const cl::Platform& p, const cl::Device& d, size_t pi, size_t di) {
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

// Host memory for a CPU device's buffer, on transparent huge pages where
// the OS grants them. With 4 KiB pages a CPU's first-level TLB reaches only
// 256-384 KiB, and its misses add a step to the latency curve that reads
// like a cache level; 2 MiB pages push the TLB's reach past the caches, as
// careful CPU latency measurements do. Where THP is off the kernel quietly
// gives small pages and nothing else changes.
struct HostMemory {
  static constexpr size_t kHugePage = 2 << 20;
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit HostMemory(size_t want) : bytes((want + kHugePage - 1) / kHugePage * kHugePage) {
    ptr = std::aligned_alloc(kHugePage, bytes);
    if (ptr == nullptr) throw OutOfResources(fmt::format("host allocation of {} bytes refused", bytes));
    madvise(ptr, bytes, MADV_HUGEPAGE);
  }
  ~HostMemory() { std::free(ptr); }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
};

class ClBuffer final : public Buffer {
 public:
  ClBuffer(cl::Buffer b, size_t bytes, std::unique_ptr<HostMemory> host = nullptr)
      : host_(std::move(host)), buffer(std::move(b)), bytes_(bytes) {}
  size_t size_bytes() const override { return bytes_; }

 private:
  std::unique_ptr<HostMemory> host_;  // outlives `buffer`: declared first, destroyed last

 public:
  cl::Buffer buffer;

 private:
  size_t bytes_;
};

// A CL_MEM_ALLOC_HOST_PTR buffer mapped once for its whole life: the usual
// way to get page-locked host memory through OpenCL.
class ClPinned final : public HostStaging {
 public:
  ClPinned(cl::CommandQueue queue, cl::Buffer buffer, size_t bytes)
      : queue_(std::move(queue)), buffer_(std::move(buffer)), bytes_(bytes) {
    ptr_ = static_cast<std::byte*>(
        queue_.enqueueMapBuffer(buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes_));
  }
  ~ClPinned() override {
    try {
      queue_.enqueueUnmapMemObject(buffer_, ptr_);
      queue_.finish();
    } catch (const cl::Error&) {
      // Nothing useful to do in a destructor; the context's release frees it.
    }
  }
  ClPinned(const ClPinned&) = delete;
  ClPinned& operator=(const ClPinned&) = delete;
  std::span<std::byte> bytes() override { return {ptr_, bytes_}; }

 private:
  cl::CommandQueue queue_;
  cl::Buffer buffer_;
  size_t bytes_;
  std::byte* ptr_ = nullptr;
};

double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

double event_ns(const cl::Event& ev) {
  return static_cast<double>(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
}

class ClKernel final : public Kernel {
 public:
  ClKernel(cl::Program prog, cl::Kernel k, std::string name, size_t max_wg, std::string source_path,
           std::string options)
      : program(std::move(prog)),
        kernel(std::move(k)),
        source_path(std::move(source_path)),
        options(std::move(options)),
        name_(std::move(name)),
        max_wg_(max_wg) {}
  const std::string& name() const override { return name_; }
  size_t max_work_group_size() const override { return max_wg_; }
  cl::Program program;
  cl::Kernel kernel;
  std::string source_path;  // below src/kernels
  std::string options;      // the build options the program was built with
  // ptxas' register count, once looked up (kernel_resources); the outer
  // optional is empty until then.
  std::optional<std::optional<uint32_t>> registers;

 private:
  std::string name_;
  size_t max_wg_;
};

class ClImage final : public Image {
 public:
  ClImage(cl::Memory mem, ImageDesc desc) : memory(std::move(mem)), desc_(desc) {}
  const ImageDesc& desc() const override { return desc_; }
  cl::Memory memory;  // cl::Image's copy and move are protected; the memory object is what kernels take

 private:
  ImageDesc desc_;
};

cl::ImageFormat cl_format(ImageFormat f) {
  return cl::ImageFormat(CL_RGBA, f == ImageFormat::kRgba32Float ? CL_FLOAT : CL_UNSIGNED_INT32);
}

const char* kind_name(ImageKind k) { return k == ImageKind::kBuffer1D ? "1D buffer image" : "2D image"; }

cl::NDRange nd_range(const Range& r) {
  switch (r.rank) {
    case 2:
      return cl::NDRange(r.dims[0], r.dims[1]);
    case 3:
      return cl::NDRange(r.dims[0], r.dims[1], r.dims[2]);
    default:
      return cl::NDRange(r.dims[0]);
  }
}

// The device and every facet OpenCL gives it: images (where the device
// supports them), host transfers, and SVM (where library and device do).
class ClDevice final : public Device, public ImageFacet, public HostTransferFacet, public SvmFacet {
 public:
  ClDevice(cl::Device device, DeviceInfo info) : device_(std::move(device)), info_(std::move(info)) {
    try {
      context_ = cl::Context(device_);
      queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
    } catch (const cl::Error& e) {
      rethrow(e, "creating a context and profiling queue on " + info_.id);
    }
  }

  const DeviceInfo& info() const override { return info_; }

  std::unique_ptr<Buffer> create_buffer(size_t bytes) override {
    if (bytes == 0 || bytes > info_.max_alloc_bytes)
      throw OutOfResources(fmt::format("{} bytes exceeds the device's max allocation of {} bytes", bytes,
                                       info_.max_alloc_bytes));
    try {
      std::unique_ptr<HostMemory> host;
      if (info_.type == "cpu") host = std::make_unique<HostMemory>(bytes);
      cl::Buffer b = host ? cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host->ptr)
                          : cl::Buffer(context_, CL_MEM_READ_WRITE, bytes);
      // Drivers allocate lazily; touching both ends makes a refused
      // allocation fail here, where the caller can retry smaller, rather
      // than inside a timed launch.
      // The touches are 1-byte writes, not fills: NVIDIA's driver (580)
      // loses its queue (CL_INVALID_COMMAND_QUEUE, and the context with it)
      // on a 1-byte clEnqueueFillBuffer at an offset in [2 GiB, 4 GiB),
      // as if the fill kernel indexed with a signed 32-bit int.
      static const cl_uchar zero = 0;
      queue_.enqueueWriteBuffer(b, CL_FALSE, 0, 1, &zero);
      queue_.enqueueWriteBuffer(b, CL_FALSE, bytes - 1, 1, &zero);
      queue_.finish();
      return std::make_unique<ClBuffer>(std::move(b), bytes, std::move(host));
    } catch (const cl::Error& e) {
      rethrow(e, fmt::format("allocating {} bytes", bytes));
    }
  }

  ImageFacet* images() override { return info_.features.images ? this : nullptr; }
  HostTransferFacet* host_transfers() override { return this; }
  SvmFacet* svm() override { return info_.features.shared_virtual_memory ? this : nullptr; }

  ImageLimits limits() const override {
    ImageLimits l;
    size_t w = 0, h = 0, buffer_pixels = 0;
    if (query(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH, w)) l.max_2d_width = w;
    if (query(device_, CL_DEVICE_IMAGE2D_MAX_HEIGHT, h)) l.max_2d_height = h;
    // OpenCL 1.2 query: a 1.1 device does not answer, and has no 1D buffer images.
    if (query(device_, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, buffer_pixels)) l.max_buffer_pixels = buffer_pixels;
    return l;
  }

  std::unique_ptr<Image> create_image(const ImageDesc& desc, Buffer* backing) override {
    const ImageLimits l = limits();
    const cl_mem_object_type type =
        desc.kind == ImageKind::kBuffer1D ? CL_MEM_OBJECT_IMAGE1D_BUFFER : CL_MEM_OBJECT_IMAGE2D;
    if (desc.kind == ImageKind::kBuffer1D && l.max_buffer_pixels == 0)
      throw Unsupported(fmt::format("{} has no 1D buffer images (an OpenCL 1.2 feature)", info_.id));
    if (!format_supported(type, desc.format))
      throw Unsupported(fmt::format("{} does not support RGBA {} {}s", info_.id,
                                    desc.format == ImageFormat::kRgba32Float ? "float" : "uint32",
                                    kind_name(desc.kind)));
    const bool too_big = desc.kind == ImageKind::kBuffer1D
                             ? desc.width > l.max_buffer_pixels
                             : desc.width > l.max_2d_width || desc.height > l.max_2d_height;
    if (desc.width == 0 || desc.height == 0 || too_big)
      throw OutOfResources(fmt::format(
          "a {}x{} {} exceeds the device's limits (1D buffer: {} pixels, 2D: {}x{})", desc.width, desc.height,
          kind_name(desc.kind), l.max_buffer_pixels, l.max_2d_width, l.max_2d_height));
    try {
      if (desc.kind == ImageKind::kBuffer1D) {
        if (backing == nullptr || backing->size_bytes() < desc.size_bytes())
          throw DeviceError("a 1D buffer image needs a backing buffer of at least its size");
        cl::Image1DBuffer img(context_, CL_MEM_READ_ONLY, cl_format(desc.format), desc.width,
                              as_cl(*backing).buffer);
        return std::make_unique<ClImage>(cl::Memory(img(), true), desc);
      }
      cl::Image2D img(context_, CL_MEM_READ_ONLY, cl_format(desc.format), desc.width, desc.height);
      return std::make_unique<ClImage>(cl::Memory(img(), true), desc);
    } catch (const cl::Error& e) {
      rethrow(e, fmt::format("creating a {}x{} {}", desc.width, desc.height, kind_name(desc.kind)));
    }
  }

  void write_image(Image& dst, std::span<const std::byte> pixels) override {
    auto& img = static_cast<ClImage&>(dst);
    const ImageDesc& d = img.desc();
    if (d.kind != ImageKind::k2D)
      throw DeviceError("write_image takes 2D images; write a 1D buffer image's buffer");
    if (pixels.size() != d.size_bytes())
      throw DeviceError(
          fmt::format("write_image: {} bytes given for a {}-byte image", pixels.size(), d.size_bytes()));
    try {
      const cl::array<size_t, 3> origin{0, 0, 0};
      const cl::array<size_t, 3> region{d.width, d.height, 1};
      const cl::Image2D view(img.memory(), true);
      queue_.enqueueWriteImage(view, CL_TRUE, origin, region, 0, 0, pixels.data());
    } catch (const cl::Error& e) {
      rethrow(e, "writing an image");
    }
  }

  void write(Buffer& dst, size_t offset, std::span<const std::byte> src) override {
    try {
      queue_.enqueueWriteBuffer(as_cl(dst).buffer, CL_TRUE, offset, src.size(), src.data());
    } catch (const cl::Error& e) {
      rethrow(e, "writing a buffer");
    }
  }

  void read(const Buffer& src, size_t offset, std::span<std::byte> dst) override {
    try {
      queue_.enqueueReadBuffer(as_cl(src).buffer, CL_TRUE, offset, dst.size(), dst.data());
    } catch (const cl::Error& e) {
      rethrow(e, "reading a buffer");
    }
  }

  Kernel& kernel(const KernelSpec& spec) override {
    const std::string key = spec.key();
    if (auto it = cache_.find(key); it != cache_.end()) return *it->second;

    // One build per (family, parameters): a family's file that holds many
    // entry points (one per op, say) is compiled once, not once per entry.
    const std::string path = opencl_source_path(spec);
    std::string options = opencl_build_options(spec);
    // NVIDIA's compiler then reports each kernel's registers in the build
    // log (kernel_resources reads them).
    if (has_ext(info_, "cl_nv_compiler_options")) options += " -cl-nv-verbose";
    const std::string program_key = path + "|" + options;
    auto pit = programs_.find(program_key);
    if (pit == programs_.end()) {
      const KernelSource* src = find_kernel_source(path);
      if (!src) throw Unsupported("the OpenCL backend has no source for kernel family '" + spec.family + "'");
      cl::Program built(context_, std::string(src->text));
      try {
        built.build(device_, options.c_str());
      } catch (const cl::Error& e) {
        std::string log;
        try {
          log = built.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
        } catch (const cl::Error&) {
          log = "(the driver gave no build log)";
        }
        throw BuildError(fmt::format("building {} with '{}' failed (OpenCL error {})", path, options, e.err()),
                         log);
      }
      pit = programs_.emplace(program_key, built).first;
    }
    cl::Program program = pit->second;
    try {
      cl::Kernel k(program, spec.entry.c_str());
      const size_t max_wg = k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_);
      auto owned = std::make_unique<ClKernel>(program, k, spec.entry, max_wg, path, options);
      auto& ref = *owned;
      cache_.emplace(key, std::move(owned));
      return ref;
    } catch (const cl::Error& e) {
      rethrow(e, fmt::format("creating kernel {} from {}", spec.entry, path));
    }
  }

  KernelResources kernel_resources(Kernel& k) override {
    auto& ck = static_cast<ClKernel&>(k);
    KernelResources r;
    try {
      r.max_work_group_size = ck.kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_);
      r.preferred_work_group_multiple =
          ck.kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device_);
      r.private_mem_bytes = ck.kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(device_);
      r.local_mem_bytes = ck.kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device_);
    } catch (const cl::Error& e) {
      rethrow(e, "querying the resources of " + k.name());
    }
    if (has_ext(info_, "cl_nv_compiler_options")) {
      if (!ck.registers) {
        ck.registers = ptxas_registers(build_log(ck.program), ck.name());
        if (!*ck.registers) ck.registers = ptxas_registers(build_log(uncached_build(ck)), ck.name());
      }
      r.registers = *ck.registers;
      if (r.registers) r.registers_source = "ptxas' report in the build log (-cl-nv-verbose)";
    }
    if (auto bin = program_binary(ck.program)) {
      r.code_bytes = bin->size();
      r.code_format = program_binary_format(*bin);
    }
    return r;
  }

  double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) override {
    auto& ck = static_cast<ClKernel&>(k);
    try {
      set_args(ck.kernel, shape, args);
      cl::Event ev;
      queue_.enqueueNDRangeKernel(ck.kernel, cl::NullRange, nd_range(shape.global), local_range(shape), nullptr,
                                  &ev);
      wait_politely(ev);
      const auto start = ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      const auto end = ev.getProfilingInfo<CL_PROFILING_COMMAND_END>();
      return static_cast<double>(end - start);
    } catch (const cl::Error& e) {
      rethrow(e, "launching " + k.name());
    }
  }

  std::unique_ptr<Buffer> create_host_buffer(size_t bytes) override {
    if (bytes == 0 || bytes > info_.max_alloc_bytes)
      throw OutOfResources(fmt::format("{} bytes exceeds the device's max allocation", bytes));
    try {
      cl::Buffer b(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
      const cl_uchar zero = 0;
      queue_.enqueueFillBuffer(b, zero, 0, bytes);
      queue_.finish();
      return std::make_unique<ClBuffer>(std::move(b), bytes);
    } catch (const cl::Error& e) {
      rethrow(e, fmt::format("allocating {} host-allocated bytes", bytes));
    }
  }

  std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) override {
    try {
      cl::Buffer b(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
      return std::make_unique<ClPinned>(queue_, std::move(b), bytes);
    } catch (const cl::Error& e) {
      rethrow(e, fmt::format("allocating {} bytes of pinned host memory", bytes));
    }
  }

  TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) override {
    return timed_transfer("timed write", blocking, [&](cl_bool block, cl::Event* ev) {
      queue_.enqueueWriteBuffer(as_cl(dst).buffer, block, 0, src.size(), src.data(), nullptr, ev);
    });
  }

  TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) override {
    return timed_transfer("timed read", blocking, [&](cl_bool block, cl::Event* ev) {
      queue_.enqueueReadBuffer(as_cl(src).buffer, block, 0, dst.size(), dst.data(), nullptr, ev);
    });
  }

  // Times one enqueued copy: host time from the call until it is done (the
  // call itself waits when blocking; otherwise the host spins on its event),
  // device time from the event's profile.
  template <class Enqueue>
  TransferTiming timed_transfer(const char* what, bool blocking, Enqueue enqueue) {
    try {
      TransferTiming t;
      cl::Event ev;
      const auto t0 = std::chrono::steady_clock::now();
      enqueue(blocking ? CL_TRUE : CL_FALSE, &ev);
      if (!blocking) spin_wait(ev);
      t.host_ns = ns_since(t0);
      t.device_ns = event_ns(ev);
      return t;
    } catch (const cl::Error& e) {
      rethrow(e, what);
    }
  }

  MapTiming timed_map(Buffer& buf, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override {
    try {
      MapTiming t;
      const size_t bytes = buf.size_bytes();
      const cl_map_flags flags = dir == MapDirection::to_host ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
      cl::Event map_ev, unmap_ev;
      auto t0 = std::chrono::steady_clock::now();
      void* ptr = queue_.enqueueMapBuffer(as_cl(buf).buffer, CL_TRUE, flags, 0, bytes, nullptr, &map_ev);
      t.map_host_ns = ns_since(t0);
      t0 = std::chrono::steady_clock::now();
      touch({static_cast<std::byte*>(ptr), bytes});
      t.touch_ns = ns_since(t0);
      t0 = std::chrono::steady_clock::now();
      queue_.enqueueUnmapMemObject(as_cl(buf).buffer, ptr, nullptr, &unmap_ev);
      spin_wait(unmap_ev);
      t.unmap_host_ns = ns_since(t0);
      t.map_device_ns = event_ns(map_ev);
      t.unmap_device_ns = event_ns(unmap_ev);
      return t;
    } catch (const cl::Error& e) {
      rethrow(e, "timed map");
    }
  }

  LaunchBatch launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override {
    auto& ck = static_cast<ClKernel&>(k);
    try {
      set_args(ck.kernel, shape, args);
      std::vector<cl::Event> evs(static_cast<size_t>(std::max(count, 1)));
      LaunchBatch b;
      const auto t0 = std::chrono::steady_clock::now();
      for (auto& ev : evs)
        queue_.enqueueNDRangeKernel(ck.kernel, cl::NullRange, nd_range(shape.global), local_range(shape),
                                    nullptr, &ev);
      spin_wait(evs.back());
      b.host_ns = ns_since(t0);
      queue_.finish();  // in-order queue: the others are done too; this only settles the events
      const auto origin = evs.front().getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>();
      const auto rel = [origin](cl_ulong t) { return static_cast<double>(t) - static_cast<double>(origin); };
      for (const auto& ev : evs) {
        EventTimes t;
        t.queued_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
        t.submit_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_SUBMIT>());
        t.start_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
        t.end_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>());
        b.events.push_back(t);
      }
      return b;
    } catch (const cl::Error& e) {
      rethrow(e, "launching a batch of " + k.name());
    }
  }

  SvmCapabilities capabilities() const override {
    if (!load_opencl_library().svm)
      throw Unsupported("the OpenCL library exports no SVM entry points (an OpenCL 1.2 library)");
    cl_device_svm_capabilities caps = 0;
    if (clGetDeviceInfo(device_(), CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, nullptr) != CL_SUCCESS)
      throw Unsupported("the device does not answer the SVM capabilities query (OpenCL 1.x)");
    SvmCapabilities c;
    c.coarse_grain_buffer = caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
    c.fine_grain_buffer = caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
    c.fine_grain_system = caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM;
    c.atomics = caps & CL_DEVICE_SVM_ATOMICS;
    return c;
  }

  MapTiming timed_map(size_t bytes, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override {
    if (!capabilities().coarse_grain_buffer) throw Unsupported("the device offers no coarse-grained SVM");
    void* ptr = clSVMAlloc(context_(), CL_MEM_READ_WRITE, bytes, 0);
    if (ptr == nullptr) throw OutOfResources(fmt::format("clSVMAlloc of {} bytes refused", bytes));
    struct Free {
      cl_context ctx;
      void* p;
      ~Free() { clSVMFree(ctx, p); }
    } guard{context_(), ptr};
    MapTiming t;
    const cl_map_flags flags = dir == MapDirection::to_host ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
    cl_event map_ev = nullptr, unmap_ev = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    cl_int err = clEnqueueSVMMap(queue_(), CL_TRUE, flags, ptr, bytes, 0, nullptr, &map_ev);
    if (err != CL_SUCCESS) throw DeviceError(fmt::format("clEnqueueSVMMap failed with OpenCL error {}", err));
    t.map_host_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    touch({static_cast<std::byte*>(ptr), bytes});
    t.touch_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    err = clEnqueueSVMUnmap(queue_(), ptr, 0, nullptr, &unmap_ev);
    if (err != CL_SUCCESS) {
      clReleaseEvent(map_ev);
      throw DeviceError(fmt::format("clEnqueueSVMUnmap failed with OpenCL error {}", err));
    }
    const cl::Event map_event(map_ev), unmap_event(unmap_ev);  // take ownership
    spin_wait(unmap_event);
    t.unmap_host_ns = ns_since(t0);
    t.map_device_ns = event_ns(map_event);
    t.unmap_device_ns = event_ns(unmap_event);
    return t;
  }

 private:
  // Waits for `ev` by spinning on its status: for host-side latencies a
  // sleep's granularity (tens of us) would be the measurement. Bounded like
  // wait_politely.
  void spin_wait(const cl::Event& ev) {
    static constexpr auto kWaitLimit = std::chrono::seconds(60);
    queue_.flush();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cl_int status = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
      if (status == CL_COMPLETE) return;
      if (status < 0) throw DeviceError(fmt::format("a command failed on the device (status {})", status));
      if (std::chrono::steady_clock::now() - start > kWaitLimit)
        throw DeviceError("a command did not finish within 60 s; the device may be hung");
    }
  }

  // Waits for `ev` by polling with short sleeps instead of clWaitForEvents.
  // Some runtimes spin inside clWaitForEvents (PoCL's CPU driver keeps the
  // host thread at 100%): on a CPU device that steals a core, and its cache
  // footprint, from the kernel being measured. Sleeping costs no accuracy
  // because the timing comes from the event's own timestamps. The wait is
  // bounded: a launch that outlives kWaitLimit is reported, not waited for.
  void wait_politely(const cl::Event& ev) {
    static constexpr auto kWaitLimit = std::chrono::seconds(60);
    queue_.flush();
    const auto start = std::chrono::steady_clock::now();
    auto nap = std::chrono::microseconds(20);
    for (;;) {
      const cl_int status = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
      if (status == CL_COMPLETE) return;
      if (status < 0) throw DeviceError(fmt::format("a launch failed on the device (status {})", status));
      if (std::chrono::steady_clock::now() - start > kWaitLimit)
        throw DeviceError("a launch did not finish within 60 s; the device may be hung");
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }

  bool format_supported(cl_mem_object_type type, ImageFormat f) const {
    std::vector<cl::ImageFormat> formats;
    try {
      context_.getSupportedImageFormats(CL_MEM_READ_ONLY, type, &formats);
    } catch (const cl::Error&) {
      return false;
    }
    const cl::ImageFormat want = cl_format(f);
    return std::any_of(formats.begin(), formats.end(), [&](const cl::ImageFormat& g) {
      return g.image_channel_order == want.image_channel_order &&
             g.image_channel_data_type == want.image_channel_data_type;
    });
  }

  static ClBuffer& as_cl(Buffer& b) { return static_cast<ClBuffer&>(b); }
  static const ClBuffer& as_cl(const Buffer& b) { return static_cast<const ClBuffer&>(b); }

  // The arguments in order, then the dynamic local buffer, if any, as the
  // kernel's last parameter (LaunchShape::local_bytes).
  static void set_args(cl::Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) {
    for (cl_uint i = 0; i < args.size(); ++i) set_arg(k, i, args[i]);
    if (shape.local_bytes > 0) k.setArg(static_cast<cl_uint>(args.size()), cl::Local(shape.local_bytes));
  }

  static cl::NDRange local_range(const LaunchShape& shape) {
    return shape.local.total() == 0 ? cl::NullRange : nd_range(shape.local);
  }

  static void set_arg(cl::Kernel& k, cl_uint i, const KernelArg& arg) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Buffer*>) {
            k.setArg(i, as_cl(*v).buffer);
          } else if constexpr (std::is_same_v<T, Image*>) {
            k.setArg(i, static_cast<ClImage&>(*v).memory);
          } else {
            k.setArg(i, v);
          }
        },
        arg);
  }

  cl::Device device_;
  DeviceInfo info_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::string build_log(const cl::Program& program) const {
    try {
      return program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
      return "";
    }
  }

  // The program binary the driver holds (CL_PROGRAM_BINARIES; one device per
  // program here, so one binary); nullopt when the driver gives none.
  std::optional<std::vector<std::byte>> program_binary(const cl::Program& program) const {
    try {
      const auto sizes = program.getInfo<CL_PROGRAM_BINARY_SIZES>();
      if (sizes.empty() || sizes[0] == 0) return std::nullopt;
      std::vector<std::byte> bytes(sizes[0]);
      auto* ptr = reinterpret_cast<unsigned char*>(bytes.data());
      if (clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS)
        return std::nullopt;
      return bytes;
    } catch (const cl::Error&) {
      return std::nullopt;
    }
  }

  // A fresh build of `k`'s program that no compiled-code cache can serve:
  // NVIDIA's driver keeps what ptxas made across processes, keyed by the
  // PTX, and a build served from there logs no register count. An empty
  // kernel with a name unique to this build changes the PTX and nothing
  // else. Used for its log only; `k` keeps its own program.
  cl::Program uncached_build(const ClKernel& k) {
    static const uint64_t process_nonce =
        static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    const KernelSource* src = find_kernel_source(k.source_path);
    if (!src) return k.program;
    const std::string text = fmt::format("__kernel void gpuscope_uncached_{}_{}(void) {{}}\n", process_nonce,
                                         ++uncached_builds_) +
                             std::string(src->text);
    cl::Program program(context_, text);
    try {
      program.build(device_, k.options.c_str());
    } catch (const cl::Error&) {
      return k.program;  // the original built; a failure here only loses the count
    }
    return program;
  }

  std::map<std::string, std::unique_ptr<ClKernel>> cache_;
  std::map<std::string, cl::Program> programs_;  // built programs by "source path|options"
  uint64_t uncached_builds_ = 0;
};

class ClBackend final : public Backend {
 public:
  std::string name() const override { return "opencl"; }
  std::string availability() const override {
    try {
      return load_opencl_library().describe();
    } catch (const UsageError& e) {
      return e.what();  // a library named by the user that cannot serve
    }
  }

  std::vector<DeviceInfo> enumerate() override {
    std::vector<DeviceInfo> out;
    for (size_t pi = 0; pi < platforms().size(); ++pi) {
      const auto devices = devices_of(platforms()[pi]);
      for (size_t di = 0; di < devices.size(); ++di) {
        try {
          out.push_back(describe(platforms()[pi], devices[di], pi, di));
        } catch (const cl::Error&) {
          // A device that cannot even describe itself is not usable; skip it.
        }
      }
    }
    return out;
  }

  std::unique_ptr<Device> open(const std::string& id) override {
    size_t pi = 0, di = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "opencl:%zu:%zu%c", &pi, &di, &tail) != 2 || pi >= platforms().size())
      throw UsageError("unknown OpenCL device '" + id + "'");
    const auto devices = devices_of(platforms()[pi]);
    if (di >= devices.size()) throw UsageError("unknown OpenCL device '" + id + "'");
    try {
      return std::make_unique<ClDevice>(devices[di], describe(platforms()[pi], devices[di], pi, di));
    } catch (const cl::Error& e) {
      rethrow(e, "opening " + id);
    }
  }

 private:
  const std::vector<cl::Platform>& platforms() {
    if (!loaded_) {
      loaded_ = true;
      if (!load_opencl_library().loaded) return platforms_;
      try {
        cl::Platform::get(&platforms_);
      } catch (const cl::Error&) {
        // No ICD installed (CL_PLATFORM_NOT_FOUND_KHR): no devices.
        platforms_.clear();
      }
    }
    return platforms_;
  }

  static std::vector<cl::Device> devices_of(const cl::Platform& p) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      devices.clear();  // CL_DEVICE_NOT_FOUND: a platform with no devices
    }
    return devices;
  }

  bool loaded_ = false;
  std::vector<cl::Platform> platforms_;
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend() { return std::make_unique<ClBackend>(); }

}  // namespace gpuscope
