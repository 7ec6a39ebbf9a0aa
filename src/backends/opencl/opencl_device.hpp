// The OpenCL device behind the Backend seam, shared by the files that
// implement it, one job each:
//   opencl_device.cpp     context and queue, buffers, launches and waits
//   opencl_programs.cpp   kernel builds, their cache and their resources
//   opencl_transfers.cpp  host transfers, mapping and SVM (HostTransferFacet, SvmFacet)
//   opencl_images.cpp     images for the texture path (ImageFacet)
// Internal to src/backends/opencl/; the rest of gpuscope sees only
// make_opencl_backend().
#pragma once

#include "backends/backend.hpp"
#include "backends/opencl/opencl_cpp.hpp"
#include "core/device_info.hpp"

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace gpuscope::opencl_detail {

// Whether an OpenCL error means the device or host ran out of memory or
// resources (OutOfResources) rather than failed (DeviceError).
bool is_out_of_resources(cl_int err);

// Throws `e` as OutOfResources or DeviceError, its message naming `what`.
[[noreturn]] void rethrow(const cl::Error& e, const std::string& what);

// Host nanoseconds since `t0`, on the steady clock.
double ns_since(std::chrono::steady_clock::time_point t0);

// A finished command's device time, start to end of its profile, in ns.
double event_ns(const cl::Event& ev);

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

// Set once a launch outlived its wait and grace (ClDevice::wait_for): the
// launch may still run, reading and writing its buffers, so nothing it may
// touch is freed or waited for again. Shared by a device and the objects it
// made, which may outlive it.
using LostFlag = std::shared_ptr<std::string>;  // the launch that lost the device; empty while usable

class ClBuffer final : public Buffer {
 public:
  ClBuffer(cl::Buffer b, size_t bytes, std::unique_ptr<HostMemory> host = nullptr, LostFlag lost = nullptr)
      : host_(std::move(host)), buffer(std::move(b)), bytes_(bytes), lost_(std::move(lost)) {}
  ~ClBuffer() override {
    // The host memory under a CPU device's buffer, which a lost launch may
    // still write, is left to the process' exit.
    if (lost_ && !lost_->empty()) (void)host_.release();
  }
  size_t size_bytes() const override { return bytes_; }

 private:
  std::unique_ptr<HostMemory> host_;  // outlives `buffer`: declared first, destroyed last

 public:
  cl::Buffer buffer;

 private:
  size_t bytes_;
  LostFlag lost_;
};

// A CL_MEM_ALLOC_HOST_PTR buffer mapped once for its whole life: the usual
// way to get page-locked host memory through OpenCL.
class ClPinned final : public HostStaging {
 public:
  ClPinned(cl::CommandQueue queue, cl::Buffer buffer, size_t bytes, LostFlag lost)
      : queue_(std::move(queue)), buffer_(std::move(buffer)), bytes_(bytes), lost_(std::move(lost)) {
    ptr_ = static_cast<std::byte*>(
        queue_.enqueueMapBuffer(buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes_));
  }
  ~ClPinned() override {
    if (!lost_->empty()) return;  // the unmap would wait behind the lost launch forever
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
  LostFlag lost_;
  std::byte* ptr_ = nullptr;
};

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

inline ClBuffer& as_cl(Buffer& b) { return static_cast<ClBuffer&>(b); }
inline const ClBuffer& as_cl(const Buffer& b) { return static_cast<const ClBuffer&>(b); }

// The device and every facet OpenCL gives it: images (where the device
// supports them), host transfers, and SVM (where library and device do).
// Every call that fails in the driver throws DeviceError or OutOfResources
// (rethrow); a feature the device lacks throws Unsupported.
class ClDevice final : public Device, public ImageFacet, public HostTransferFacet, public SvmFacet {
 public:
  // Creates the context and an in-order profiling queue on `device`.
  ClDevice(cl::Device device, DeviceInfo info);
  // A lost device's queue and context are kept to the process' exit:
  // releasing them could wait behind the launch that never ends.
  ~ClDevice() override;

  const DeviceInfo& info() const override;
  ImageFacet* images() override;
  HostTransferFacet* host_transfers() override;
  SvmFacet* svm() override;

  // opencl_device.cpp
  std::unique_ptr<Buffer> create_buffer(size_t bytes) override;
  void write(Buffer& dst, size_t offset, std::span<const std::byte> src) override;
  void read(const Buffer& src, size_t offset, std::span<std::byte> dst) override;
  double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) override;
  LaunchBatch launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override;

  // opencl_programs.cpp
  Kernel& kernel(const KernelSpec& spec) override;
  KernelResources kernel_resources(Kernel& k) override;
  double build_s() const override { return build_s_; }

  // opencl_images.cpp
  ImageLimits limits() const override;
  std::unique_ptr<Image> create_image(const ImageDesc& desc, Buffer* backing) override;
  void write_image(Image& dst, std::span<const std::byte> pixels) override;

  // opencl_transfers.cpp
  std::unique_ptr<Buffer> create_host_buffer(size_t bytes) override;
  std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) override;
  TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) override;
  TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) override;
  MapTiming timed_map(Buffer& buf, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override;
  SvmCapabilities capabilities() const override;
  MapTiming timed_map(size_t bytes, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override;

 private:
  // How wait_for polls the event's status: `spin` without pause, `nap`
  // with sleeps of 20 us doubling to 1 ms.
  enum class Poll { spin, nap };
  // Waits for `ev` at most `wait_ms` (the LaunchBound's wait for what it
  // is): throws DeviceError naming `what` ("a launch of sustain/fma_load")
  // when it fails on the device, LaunchTimeout when it runs past the wait
  // (after a grace as long: lost when it still runs). Never clWaitForEvents
  // or clFinish, which wait without a bound; and some runtimes spin inside
  // them (PoCL's CPU driver keeps the host thread at 100%), which on a CPU
  // device takes a core, and its cache footprint, from the kernel measured.
  void wait_for(const cl::Event& ev, Poll poll, const std::string& what, double wait_ms);
  // For host-side latencies (transfers, launch overhead), where a sleep's
  // granularity (tens of us) would be the measurement.
  void spin_wait(const cl::Event& ev, const std::string& what = "a command",
                 double wait_ms = LaunchBound::command_wait_ms()) {
    wait_for(ev, Poll::spin, what, wait_ms);
  }
  // For timed launches: napping costs no accuracy because the timing comes
  // from the event's own timestamps.
  void wait_politely(const cl::Event& ev, const std::string& what, double wait_ms) {
    wait_for(ev, Poll::nap, what, wait_ms);
  }
  // Throws DeviceLost once a launch has lost the device: every queue call
  // would wait behind it. Called first by every call that enqueues.
  void check_usable() const;

  // Times one enqueued copy (opencl_transfers.cpp).
  template <class Enqueue>
  TransferTiming timed_transfer(const char* what, bool blocking, Enqueue enqueue);

  bool format_supported(cl_mem_object_type type, ImageFormat f) const;

  // The driver's build log of `program`; empty when it gives none.
  std::string build_log(const cl::Program& program) const;
  std::optional<std::vector<std::byte>> program_binary(const cl::Program& program) const;
  cl::Program uncached_build(const ClKernel& k);

  LostFlag lost_ = std::make_shared<std::string>();
  cl::Device device_;
  DeviceInfo info_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::map<std::string, std::unique_ptr<ClKernel>> cache_;
  // A program is built once per (source path, build options).
  struct ProgramKey {
    std::string path, options;
    std::string key() const { return path + "|" + options; }
  };
  ProgramKey program_key(const KernelSpec& spec) const;
  // Builds `pk`'s program; throws BuildError with the log, Unsupported
  // without a source. No prebuild(): NVIDIA's OpenCL compiler ran programs
  // built on several threads no faster than one after another.
  cl::Program build_program(const KernelSpec& spec, const ProgramKey& pk) const;

  std::map<std::string, cl::Program> programs_;  // built programs by ProgramKey::key()
  double build_s_ = 0;                            // host seconds in clBuildProgram
  uint64_t uncached_builds_ = 0;
};

}  // namespace gpuscope::opencl_detail
