// The seam between probes and device APIs. Probes are written against these
// few interfaces only; OpenCL and the simulator implement them. Kernels are
// named by meaning (kernel_spec.hpp), so each backend maps them onto its own
// sources, or, for the simulator, onto models of what they compute.
#pragma once

#include "backends/graphics.hpp"
#include "backends/kernel_spec.hpp"
#include "backends/launch_bound.hpp"
#include "core/device_info.hpp"
#include "core/error.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope {

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t size_bytes() const = 0;
};

// An image (texture) object. Pixels are 16 bytes (four 32-bit channels) in
// every format below, the one pixel size OpenCL 1.2 requires for both
// unsigned-integer and float images (CL_RGBA with CL_UNSIGNED_INT32 / CL_FLOAT).
enum class ImageKind {
  kBuffer1D,  // image1d_buffer_t: a view of a Buffer, pixel i at byte 16*i (data written through the buffer)
  k2D,        // image2d_t: width x height pixels in the driver's own layout (data written by write_image)
};
enum class ImageFormat { kRgba32Uint, kRgba32Float };

struct ImageDesc {
  ImageKind kind = ImageKind::kBuffer1D;
  ImageFormat format = ImageFormat::kRgba32Uint;
  size_t width = 0;   // pixels
  size_t height = 1;  // pixels; 1 for kBuffer1D
  static constexpr size_t kPixelBytes = 16;
  size_t size_bytes() const { return width * height * kPixelBytes; }
};

// What every backend's write_image checks first: a 2D image (a 1D buffer
// image is written through its buffer), given exactly its bytes.
inline void check_image_write(const ImageDesc& d, size_t bytes) {
  if (d.kind != ImageKind::k2D) throw DeviceError("write_image takes 2D images; write a 1D buffer image's buffer");
  if (bytes != d.size_bytes())
    throw DeviceError("write_image: " + std::to_string(bytes) + " bytes given for a " +
                      std::to_string(d.size_bytes()) + "-byte image");
}

// What the device can do with images; every size in pixels.
struct ImageLimits {
  size_t max_buffer_pixels = 0;  // largest kBuffer1D image; 0 when the API lacks them (OpenCL 1.1)
  size_t max_2d_width = 0, max_2d_height = 0;
};

class Image {
 public:
  virtual ~Image() = default;
  virtual const ImageDesc& desc() const = 0;
};

// Work-item counts per dimension; unused dimensions are 1.
struct Range {
  std::array<size_t, 3> dims{1, 1, 1};
  int rank = 1;
  static Range d1(size_t x) { return Range{{x, 1, 1}, 1}; }
  static Range d2(size_t x, size_t y) { return Range{{x, y, 1}, 2}; }
  size_t total() const { return dims[0] * dims[1] * dims[2]; }
};

// One launch's shape.
struct LaunchShape {
  Range global;            // work-items in all
  Range local;             // per work-group; total() == 0: the driver chooses
  // Local (shared) memory given to the kernel's dynamic local buffer, per
  // work-group; 0: the kernel has none. Kernels that take one declare it as
  // their last parameter (OpenCL C: a __local pointer after the arguments).
  size_t local_bytes = 0;
};

using KernelArg = std::variant<Buffer*, int32_t, uint32_t, int64_t, uint64_t, float, double, Image*>;

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& name() const = 0;
  // Largest work-group this kernel can be launched with on its device.
  virtual size_t max_work_group_size() const = 0;
};

// What the compiler and driver say a built kernel uses. Optional values are
// absent where the backend cannot learn them.
struct KernelResources {
  size_t max_work_group_size = 0;
  size_t preferred_work_group_multiple = 0;  // often the wave width on GPUs; a vector width on CPUs
  uint64_t private_mem_bytes = 0;            // per work-item: spilled registers and stack
  uint64_t local_mem_bytes = 0;              // per work-group: statically declared local memory
  std::optional<uint32_t> registers;         // per work-item, as the compiler reports them
  std::string registers_source;              // where `registers` came from, for the record
  // The program binary the driver holds for the kernel's program, and what
  // it is: "elf", "ptx" (NVIDIA's virtual ISA text), "pocl" (PoCL's LLVM IR
  // container), "llvm-bitcode", "machine code" (the sim), "unknown".
  std::optional<uint64_t> code_bytes;
  std::string code_format;
};

// Page-locked host memory the device can reach directly (OpenCL: a
// CL_MEM_ALLOC_HOST_PTR buffer kept mapped), used as the host side of
// transfers ("pinned" memory). Valid while the object lives.
class HostStaging {
 public:
  virtual ~HostStaging() = default;
  virtual std::span<std::byte> bytes() = 0;
};

// Times of one host<->device transfer. host_ns: wall time from the call until
// the host sees the data in place (the caller's view); device_ns: the
// command's own start->end from profiling events (the copy engine's view).
struct TransferTiming {
  double host_ns = 0;
  double device_ns = 0;
};

enum class MapDirection { to_host, to_device };

// Times of one map -> touch -> unmap of a whole buffer, all in ns. touch_ns is
// the host's work on the mapped bytes (reading them all for to_host, writing
// them for to_device); the map and unmap times are what the API costs on top.
struct MapTiming {
  double map_host_ns = 0;
  double map_device_ns = 0;
  double touch_ns = 0;
  double unmap_host_ns = 0;
  double unmap_device_ns = 0;
};

// Timestamps of one command in ns on the device's clock, relative to a
// point before the batch's first command (its queueing where the API stamps
// that, else its start). Queueing and submission are stamped by some APIs
// only (OpenCL's profiling events; Vulkan's queueing is the host's submit
// call put on the device's clock through calibrated timestamps); start and
// end by all.
struct EventTimes {
  std::optional<double> queued_ns;
  std::optional<double> submit_ns;
  double start_ns = 0;
  double end_ns = 0;
  // Where queued_ns is a host instant put on the device's clock (Vulkan):
  // how far the two clocks' pairing may be off, in ns (the driver's
  // maxDeviation); unset where the device stamped it itself.
  std::optional<double> queued_deviation_ns;
};

// A batch of identical launches enqueued back to back. host_ns: wall time
// from the first enqueue until the host sees the last one complete (for a
// batch of one: the launch round trip).
struct LaunchBatch {
  double host_ns = 0;
  std::vector<EventTimes> events;
};

// Shared virtual memory the device offers (OpenCL 2.0+).
struct SvmCapabilities {
  bool coarse_grain_buffer = false;
  bool fine_grain_buffer = false;
  bool fine_grain_system = false;
  bool atomics = false;
};

// The texture path: image objects kernels read through samplers.
class ImageFacet {
 public:
  virtual ~ImageFacet() = default;
  virtual ImageLimits limits() const = 0;
  // kBuffer1D needs `backing` (a Buffer of at least desc.size_bytes(); the
  // image is a view of it and sees what is written to it); k2D takes none.
  // Throws Unsupported when the device lacks this kind, OutOfResources when
  // the size exceeds the device's limits or memory.
  virtual std::unique_ptr<Image> create_image(const ImageDesc& desc, Buffer* backing) = 0;
  // Writes a whole k2D image: rows of desc().width pixels, tightly packed.
  virtual void write_image(Image& dst, std::span<const std::byte> pixels) = 0;
};

// Host<->device transfers, timed from both sides.
class HostTransferFacet {
 public:
  virtual ~HostTransferFacet() = default;
  // A device buffer the driver allocates in host-reachable memory
  // (CL_MEM_ALLOC_HOST_PTR): zero-copy on unified-memory devices.
  virtual std::unique_ptr<Buffer> create_host_buffer(size_t bytes) = 0;
  virtual std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) = 0;
  // Copies host -> device (write) or device -> host (read) at offset 0.
  // blocking: the API call itself waits; otherwise the command is enqueued
  // and the host waits on its completion (spinning, for a tight host time).
  virtual TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) = 0;
  virtual TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) = 0;
  // Maps all of `buf` (for reading when to_host, for writing with the old
  // contents invalidated when to_device), runs `touch` on the mapped bytes,
  // unmaps; every step waited for and timed.
  virtual MapTiming timed_map(Buffer& buf, MapDirection dir,
                              const std::function<void(std::span<std::byte>)>& touch) = 0;
};

// Shared virtual memory: one allocation both sides address.
class SvmFacet {
 public:
  virtual ~SvmFacet() = default;
  virtual SvmCapabilities capabilities() const = 0;
  // Allocates `bytes` of coarse-grained SVM and hands it to the host and back
  // (clEnqueueSVMMap/Unmap) as HostTransferFacet::timed_map does for buffers.
  virtual MapTiming timed_map(size_t bytes, MapDirection dir,
                              const std::function<void(std::span<std::byte>)>& touch) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  // Throws OutOfResources when the device refuses the allocation (callers
  // may retry smaller), DeviceError otherwise.
  virtual std::unique_ptr<Buffer> create_buffer(size_t bytes) = 0;
  virtual void write(Buffer& dst, size_t offset_bytes, std::span<const std::byte> src) = 0;
  virtual void read(const Buffer& src, size_t offset_bytes, std::span<std::byte> dst) = 0;

  // Builds (and caches) a kernel; throws BuildError carrying the build log,
  // Unsupported when the backend has no source or model of the kernel.
  virtual Kernel& kernel(const KernelSpec& spec) = 0;

  // What the compiler and driver report for a built kernel.
  virtual KernelResources kernel_resources(Kernel& k) = 0;

  // Host seconds spent building kernels (compiling sources, creating
  // pipelines) since the device was opened; 0 where builds cost no host
  // time (the sim). A run records each probe's share beside its wall time.
  virtual double build_s() const { return 0; }

  // Builds the kernels of `specs` ahead of use (and, where the API makes a
  // pipeline per work-group shape, their pipelines for `shape`), on several
  // host threads where the backend can; kernel() then finds them built.
  // Never throws for a kernel that fails to build: kernel() meets the
  // failure again and reports it. The default builds nothing ahead.
  virtual void prebuild(std::span<const KernelSpec> /*specs*/, const LaunchShape& /*shape*/) {}

  // prebuild for a later probe, called on a thread of its own while the
  // probes before it run (ProbeDef::build_ahead): safe beside every other
  // call on the device, its host time kept out of build_s() and counted in
  // build_ahead_s(). The default builds nothing ahead.
  virtual void build_ahead(std::span<const KernelSpec> /*specs*/, const LaunchShape& /*shape*/) {}
  virtual double build_ahead_s() const { return 0; }

  // How long launch() and launch_batch() wait for their launches
  // (launch_bound.hpp); a run sets it from --max-launch-ms before its first
  // probe. A launch past its wait throws LaunchTimeout; once one has left
  // the device lost, every further call throws DeviceLost.
  void set_launch_bound(const LaunchBound& b) { launch_bound_ = b; }
  const LaunchBound& launch_bound() const { return launch_bound_; }

  // Runs one launch to completion and returns its device time in ns, from
  // the API's own timestamps (queued work excluded).
  virtual double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) = 0;

  // Enqueues `count` launches back to back, then waits (spinning) for the
  // last; each launch's timestamps, and the host's wall time.
  virtual LaunchBatch launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                                   int count) = 0;

  // Optional facets: nullptr when the device has none, and the probes that
  // need one skip with that reason.
  virtual ImageFacet* images() { return nullptr; }
  virtual HostTransferFacet* host_transfers() { return nullptr; }
  virtual SvmFacet* svm() { return nullptr; }
  // Render passes (graphics.hpp); nullptr where the device has no graphics
  // queue or its backend no graphics pipeline (OpenCL).
  virtual GraphicsFacet* graphics() { return nullptr; }

  // Seconds on the clock probes' time budgets run on (TimeBudget); only
  // differences mean anything. A real device's is the host's steady clock,
  // so a budget is wall time. A simulated device's is its modelled time
  // (kernels, transfers and each call's host overhead as its description
  // models them), so what a sim run measures does not depend on how busy
  // the machine running it is.
  virtual double budget_clock_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  // Convenience wrappers.
  double launch(Kernel& k, Range global, Range local, std::span<const KernelArg> args) {
    return launch(k, LaunchShape{global, local}, args);
  }
  template <class T>
  void write_values(Buffer& dst, std::span<const T> values, size_t offset_elems = 0) {
    write(dst, offset_elems * sizeof(T), std::as_bytes(values));
  }
  template <class T>
  std::vector<T> read_values(const Buffer& src, size_t count, size_t offset_elems = 0) {
    std::vector<T> out(count);
    read(src, offset_elems * sizeof(T), std::as_writable_bytes(std::span<T>(out)));
    return out;
  }
 private:
  LaunchBound launch_bound_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // the ID prefix, e.g. "opencl"
  // Where the backend's API comes from (the library opened), or why it is
  // absent; one line, for `gpuscope list --verbose`. Never throws.
  virtual std::string availability() const = 0;
  // Every device this backend can open, with its full info. Never throws for
  // a missing runtime: an API with no platforms yields an empty list.
  virtual std::vector<DeviceInfo> enumerate() = 0;
  // Opens a device by its ID; throws UsageError for an unknown ID.
  virtual std::unique_ptr<Device> open(const std::string& id) = 0;
  // IDs this backend opens though enumerate() does not list them (the sim
  // backend's "sim:PATH.json", a user's device description).
  virtual bool opens_unlisted(const std::string& /*id*/) const { return false; }
};

// What the command line tells the backends before any device is listed or
// opened.
struct BackendSettings {
  // --opencl-library; unset: GPUSCOPE_OPENCL_LIBRARY, else the search
  // (backends/opencl/opencl_library.hpp).
  std::optional<std::string> opencl_library;
};

// Applies `s`. A library the user named (option or environment) is opened
// now, so that a wrong one is bad input (UsageError) before anything else.
void configure_backends(const BackendSettings& s);

// All backends compiled in, in the order devices are listed.
std::vector<std::unique_ptr<Backend>> make_backends();

// The devices of every backend, in `gpuscope list` order.
std::vector<DeviceInfo> enumerate_devices();

// Opens `id`, or the default device when `id` is empty: the first GPU, else
// the first device of any type. Throws UsageError naming the valid IDs.
std::unique_ptr<Device> open_device(const std::string& id);

}  // namespace gpuscope
