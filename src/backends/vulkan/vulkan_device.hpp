// Internal to the Vulkan backend: an opened device and its objects.
//
// VkDev is one logical device with one compute queue, one command buffer
// and one fence: every submission is recorded, submitted and waited for
// before the next (submit()). Its parts live in one file each:
//   vulkan_device.cpp     creation, memory, submission, timestamp queries, buffer read/write
//   vulkan_kernels.cpp    GLSL to shader modules, layouts, pipelines, kernel resources
//   vulkan_launch.cpp     arguments to push constants and descriptors, timed dispatches
//   vulkan_transfers.cpp  the HostTransferFacet: staging, pinned memory, maps
//   vulkan_images.cpp     the ImageFacet: texel-buffer views and sampled 2D images
//   vulkan_graphics*.cpp  the GraphicsFacet (VkGraphics, vulkan_graphics.hpp)
#pragma once

#include <volk.h>  // before any other Vulkan header

#include "backends/backend.hpp"
#include "backends/vulkan/calibrated_timestamps.hpp"
#include "backends/vulkan/vulkan_glsl.hpp"
#include "backends/vulkan/vulkan_graphics.hpp"
#include "backends/vulkan/vulkan_instance.hpp"
#include "backends/vulkan/vulkan_physical.hpp"
#include "core/device_info.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::vulkan {

// A VkBuffer bound to memory of its own.
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
  uint64_t address = 0;  // device address; 0 without bufferDeviceAddress
  Memory shadow;         // host-visible twin for timed_map on memory the host cannot map
};

class VkPinnedHost final : public HostStaging {
 public:
  VkPinnedHost(VkDev& dev, Memory m) : dev_(dev), mem(m) {}
  ~VkPinnedHost() override;
  std::span<std::byte> bytes() override { return {static_cast<std::byte*>(mem.mapped), mem.bytes}; }
  VkDev& dev_;
  Memory mem;
};

// An image as a shader's descriptor takes it: a kBuffer1D image is a buffer
// view of its backing buffer (a uniform texel buffer); a k2D image owns its
// VkImage and memory and is sampled through its view and the device's
// sampler, in SHADER_READ_ONLY_OPTIMAL layout between transfers.
class VkImg final : public Image {
 public:
  VkImg(VkDev& dev, const ImageDesc& desc) : dev_(dev), desc_(desc) {}
  ~VkImg() override;
  const ImageDesc& desc() const override { return desc_; }
  VkDev& dev_;
  VkBufferView texel_view = VK_NULL_HANDLE;  // kBuffer1D
  VkImage image = VK_NULL_HANDLE;            // k2D
  VkDeviceMemory memory = VK_NULL_HANDLE;    // k2D
  VkImageView view = VK_NULL_HANDLE;         // k2D

 private:
  ImageDesc desc_;
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

inline VkDescriptorType descriptor_type(SampledKind k) {
  return k == SampledKind::kTexelBuffer ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                        : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
}

inline double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

constexpr uint32_t kPushBytes = 128;  // the push-constant range every pipeline layout declares
constexpr uint32_t kMaxBindings = 64;
constexpr size_t kStagingBytes = size_t{64} << 20;

class VkDev final : public Device, public HostTransferFacet, public ImageFacet {
 public:
  VkDev(std::unique_ptr<Physical> phys, DeviceInfo info);
  ~VkDev() override;

  const DeviceInfo& info() const override { return info_; }
  HostTransferFacet* host_transfers() override { return this; }
  // Where the device has R32G32B32A32_UINT texel buffers or sampled 2D
  // images (DeviceInfo::vendor_info["vk_images"] says which, or why none).
  ImageFacet* images() override { return p_->images.offered() ? this : nullptr; }
  // Where the queue has GRAPHICS and RGBA8 is a blendable colour attachment
  // (DeviceInfo::vendor_info["vk_graphics"] says what, or why none);
  // created on first use.
  GraphicsFacet* graphics() override;

  // Buffers (vulkan_device.cpp).
  std::unique_ptr<Buffer> create_buffer(size_t bytes) override;
  void write(Buffer& dst, size_t offset, std::span<const std::byte> src) override;
  void read(const Buffer& src, size_t offset, std::span<std::byte> dst) override;

  // Kernels (vulkan_kernels.cpp).
  Kernel& kernel(const KernelSpec& spec) override;
  KernelResources kernel_resources(Kernel& kernel) override;
  double build_s() const override { return build_s_; }
  double build_ahead_s() const override { return ahead_s_; }
  // Builds on up to 8 host threads (vulkan_kernels.cpp).
  void prebuild(std::span<const KernelSpec> specs, const LaunchShape& shape) override;
  // The same on half the host's threads, its time kept apart (ahead_s_).
  void build_ahead(std::span<const KernelSpec> specs, const LaunchShape& shape) override;

  // Launches (vulkan_launch.cpp).
  double launch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args) override;
  LaunchBatch launch_batch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override;
  // Each launch's timestamps of one submission (ticks: start and end of
  // each), relative to the submission where a clock pairing puts the host's
  // vkQueueSubmit call on the device's clock (queued_ns: all launches of a
  // batch are queued by that one call), else to the first start.
  std::vector<EventTimes> batch_events(const std::vector<uint64_t>& t, int count,
                                       const ClockPairing* pairing) const;

  // HostTransferFacet (vulkan_transfers.cpp).
  std::unique_ptr<Buffer> create_host_buffer(size_t bytes) override;
  std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) override;
  TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) override;
  TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) override;
  MapTiming timed_map(Buffer& buffer, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override;

  // ImageFacet (vulkan_images.cpp).
  ImageLimits limits() const override { return p_->images.limits; }
  std::unique_ptr<Image> create_image(const ImageDesc& desc, Buffer* backing) override;
  void write_image(Image& dst, std::span<const std::byte> pixels) override;

  // The graphics facet records into the same command buffer, with the
  // same timestamp pool and submission.
  friend class VkGraphics;

  // For the objects' destructors.
  void free_memory(Memory& m);
  void free_image(VkImg& img);
  void forget_pinned(VkPinnedHost* p) { std::erase(pinned_, p); }
  // After a LaunchTimeout with device_lost: the objects' destructors free nothing.
  bool lost() const { return !lost_.empty(); }

 private:
  // --- memory (vulkan_device.cpp) ---

  static constexpr VkBufferUsageFlags kStorage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  static constexpr VkBufferUsageFlags kTransfer = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  static constexpr VkMemoryPropertyFlags kHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

  // A buffer in the first memory type that has all of `want` (then, among
  // those, prefers `prefer`); nullopt when no type has `want`.
  std::optional<Memory> allocate(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                                 VkMemoryPropertyFlags prefer = 0);
  // A storage buffer (storage_usage_) in memory with `want`, preferring `prefer`.
  std::unique_ptr<VkBuf> make_buffer(size_t bytes, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer);
  // The staging buffer, grown to min(max(want, 1 MiB), kStagingBytes).
  Memory& staging(size_t want);

  // --- submission and timing (vulkan_device.cpp) ---

  // Records `record` into the command buffer, submits it, waits (spinning
  // when `spin`, else blocking in the driver) at most `wait_ms`, the
  // LaunchBound's wait for what it holds; returns the host time from
  // submission to the wait's end. Past the wait it throws LaunchTimeout
  // naming `what` ("a launch of sustain/fma_load"), after the grace that
  // tells a late launch from a lost device (end_and_wait).
  template <class Record>
  double submit(Record record, bool spin = false, double wait_ms = LaunchBound::command_wait_ms(),
                const std::string& what = "a command") {
    begin_recording();
    record(cb_);
    return end_and_wait(spin, wait_ms, what);
  }
  // Throws DeviceLost once a submission has left the device lost.
  void begin_recording();
  double end_and_wait(bool spin, double wait_ms, const std::string& what);
  void barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
               VkAccessFlags dst_access);
  // The timestamp query pool, at least `n` queries, reset inside the
  // command buffer being recorded.
  void reset_queries(VkCommandBuffer cb, uint32_t n);
  // Ticks of queries [0, n), as read after the submission finished.
  std::vector<uint64_t> read_queries(uint32_t n);
  double ticks_ns(uint64_t from, uint64_t to) const {
    return static_cast<double>((to - from) & ts_mask_) * static_cast<double>(ts_period_);
  }
  // Copies between buffers, timed by a pair of timestamps; the device ns.
  double copy(VkBuffer src, size_t src_off, VkBuffer dst, size_t dst_off, size_t bytes, bool spin,
              double* host_ns = nullptr);

  static VkBuf& as_vk(Buffer& b) { return static_cast<VkBuf&>(b); }
  static const VkBuf& as_vk(const Buffer& b) { return static_cast<const VkBuf&>(b); }
  void check_range(const Buffer& b, size_t offset, size_t bytes, const char* what) const;

  // --- kernels (vulkan_kernels.cpp) ---

  std::string preamble() const;
  // The matrix family is SPIR-V written by C++ (kernels/vulkan/matrix_spirv.hpp):
  // no GLSL compiler here knows GL_KHR_cooperative_matrix.
  GlslShader matrix_shader(const KernelSpec& spec) const;
  // The kernel of `spec` (named `key`), built but not cached. Touches no
  // member but reads: callable from several threads at once.
  std::unique_ptr<VkKern> make_kernel(const KernelSpec& spec, const std::string& key) const;
  // Creates the module, set layout and pipeline layout of `spec`'s shader.
  std::unique_ptr<VkKern> build(const KernelSpec& spec, const std::string& key, GlslShader shader) const;
  // The pipeline of `k` for (local x, y, z, local words), created on first use.
  VkPipeline pipeline(VkKern& k, std::array<uint32_t, 4> cfg);
  // A new pipeline of `k` for `cfg`; thread-safe as make_kernel is.
  VkPipeline create_pipeline(const VkKern& k, std::array<uint32_t, 4> cfg) const;
  // The pipeline configuration (local x, y, z, local words) a launch of
  // `shape` needs; throws for shapes over the device's limits.
  std::array<uint32_t, 4> config_of(const VkKern& k, const LaunchShape& shape) const;

  // --- launches (vulkan_launch.cpp) ---

  // What a launch needs, checked once for a single launch or a batch.
  struct Prepared {
    VkPipeline pipeline;
    std::array<uint32_t, 3> groups;
    std::vector<std::byte> push;
  };
  Prepared prepare(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args);
  // The descriptor set of `k`'s bindings, each the argument at its position.
  VkDescriptorSet bind_arguments(VkKern& k, std::span<const KernelArg> args);
  // `count` dispatches, each between its own pair of timestamps, in one
  // submission; the device's start and end of each in ticks.
  std::vector<uint64_t> dispatch(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args, int count,
                                 bool spin, double* host_ns);

  // --- images (vulkan_images.cpp) ---

  // The image's layout moved from `from` to `to`, recorded into `cb`.
  void transition(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to);
  // The sampler every sampled 2D image is bound with, created on first use.
  VkSampler sampler();

  // --- host transfers (vulkan_transfers.cpp) ---

  // The pinned allocation holding all of [ptr, ptr + n), if any, and the offset.
  std::optional<std::pair<VkBuffer, size_t>> pinned_at(const std::byte* ptr, size_t n) const;

  std::unique_ptr<Physical> p_;
  DeviceInfo info_;
  std::unique_ptr<CalibratedTimestamps> calibrated_;
  // Set when a submission outlived its wait and its grace: its fence may
  // never signal, so nothing is submitted, waited for or freed again (freeing
  // what a running command uses is undefined); the destructor leaks it all.
  std::string lost_;  // the launch that lost the device; empty while usable
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
  // kStorage, and where the device has texel buffers UNIFORM_TEXEL_BUFFER,
  // so that any buffer can back a kBuffer1D image.
  VkBufferUsageFlags storage_usage_ = kStorage;
  VkSampler sampler_ = VK_NULL_HANDLE;
  std::vector<VkPinnedHost*> pinned_;
  // Builds several kernels on up to max_threads threads, adding their host
  // time to `seconds` (prebuild, build_ahead).
  void build_many(std::span<const KernelSpec> specs, const LaunchShape& shape, double& seconds, size_t max_threads);

  std::map<std::string, std::unique_ptr<VkKern>> kernels_;  // guarded by kernels_mutex_
  std::mutex kernels_mutex_;  // kernel() and build_ahead() may run on two threads at once
  double build_s_ = 0;  // host seconds compiling GLSL and creating shader modules and pipelines
  double ahead_s_ = 0;  // the same, for build_ahead (its own thread's)
  std::unique_ptr<VkGraphics> graphics_;
};

}  // namespace gpuscope::vulkan
