#include "backends/vulkan/vulkan_device.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

VkDev::VkDev(std::unique_ptr<Physical> phys, DeviceInfo info) : p_(std::move(phys)), info_(std::move(info)) {
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
  const char* calibrated = calibrated_timestamps_extension(p_->exts);
  if (calibrated) exts.push_back(calibrated);
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &p_->f;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  check(vkCreateDevice(p_->pd, &ci, nullptr, &dev_), "vkCreateDevice");
  calibrated_ = std::make_unique<CalibratedTimestamps>(volkGetLoadedInstance(), p_->pd, dev_, calibrated);
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
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxBindings},
                                        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kMaxBindings},
                                        {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, kMaxBindings}};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = static_cast<uint32_t>(std::size(sizes));
  dpi.pPoolSizes = sizes;
  check(vkCreateDescriptorPool(dev_, &dpi, nullptr, &desc_pool_), "vkCreateDescriptorPool");
  const uint32_t bits = p_->timestamp_bits;
  ts_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  ts_period_ = p_->limits().timestampPeriod;
  if (p_->images.any_texel_buffer()) storage_usage_ |= VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
}

VkDev::~VkDev() {
  if (lost()) {
    // A command still runs on the queue, or its fence never signals: waiting
    // would hang and freeing is undefined, so every object is left to the
    // process' exit.
    (void)graphics_.release();
    return;
  }
  vkDeviceWaitIdle(dev_);
  graphics_.reset();
  for (auto& [key, k] : kernels_) {
    for (auto& [cfg, pipe] : k->pipelines) vkDestroyPipeline(dev_, pipe, nullptr);
    vkDestroyPipelineLayout(dev_, k->layout, nullptr);
    vkDestroyDescriptorSetLayout(dev_, k->set_layout, nullptr);
    vkDestroyShaderModule(dev_, k->module, nullptr);
  }
  free_memory(staging_);
  if (sampler_) vkDestroySampler(dev_, sampler_, nullptr);
  if (queries_) vkDestroyQueryPool(dev_, queries_, nullptr);
  vkDestroyDescriptorPool(dev_, desc_pool_, nullptr);
  vkDestroyFence(dev_, fence_, nullptr);
  vkDestroyCommandPool(dev_, pool_, nullptr);
  vkDestroyDevice(dev_, nullptr);
}

GraphicsFacet* VkDev::graphics() {
  if (!p_->graphics.limits.any()) return nullptr;
  if (!graphics_) graphics_ = std::make_unique<VkGraphics>(*this, p_->graphics);
  return graphics_.get();
}

VkBuf::~VkBuf() {
  dev_.free_memory(shadow);
  dev_.free_memory(mem);
}

VkPinnedHost::~VkPinnedHost() {
  dev_.forget_pinned(this);
  dev_.free_memory(mem);
}

// --- memory ---------------------------------------------------------------

std::optional<Memory> VkDev::allocate(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                                      VkMemoryPropertyFlags prefer) {
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

void VkDev::free_memory(Memory& m) {
  if (lost()) {  // a running command may still use it (~VkDev)
    m = Memory{};
    return;
  }
  if (m.mapped) vkUnmapMemory(dev_, m.memory);
  if (m.buffer) vkDestroyBuffer(dev_, m.buffer, nullptr);
  if (m.memory) vkFreeMemory(dev_, m.memory, nullptr);
  m = Memory{};
}

std::unique_ptr<VkBuf> VkDev::make_buffer(size_t bytes, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  if (bytes == 0 || bytes > info_.max_alloc_bytes)
    throw OutOfResources(fmt::format("{} bytes exceeds the device's largest storage buffer of {} bytes", bytes,
                                     info_.max_alloc_bytes));
  auto m = allocate(bytes, storage_usage_, want, prefer);
  if (!m) throw OutOfResources(fmt::format("no memory type for a {}-byte storage buffer", bytes));
  uint64_t address = 0;
  if (p_->bda()) {
    VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = m->buffer;
    address = vkGetBufferDeviceAddress(dev_, &ai);
  }
  return std::make_unique<VkBuf>(*this, *m, address);
}

std::unique_ptr<Buffer> VkDev::create_buffer(size_t bytes) {
  return make_buffer(bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
}

Memory& VkDev::staging(size_t want) {
  want = std::min(std::max<size_t>(want, size_t{1} << 20), kStagingBytes);
  if (staging_.bytes < want) {
    free_memory(staging_);
    auto m = allocate(want, kTransfer, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (!m) throw DeviceError("the device has no host-visible coherent memory for staging");
    staging_ = *m;
  }
  return staging_;
}

// --- submission and timing --------------------------------------------------

void VkDev::begin_recording() {
  if (lost()) throw DeviceLost(fmt::format("the device was lost: {} never finished", lost_));
  check(vkResetCommandBuffer(cb_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer");
  // Earlier submissions' writes are visible to everything that follows.
  barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
          VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

double VkDev::end_and_wait(bool spin, double wait_ms, const std::string& what) {
  // This submission's writes are visible to the host.
  barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb_;
  const auto t0 = std::chrono::steady_clock::now();
  submit_host_ns_ = calibrated_->usable() ? calibrated_->host_now_ns() : 0;
  check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
  const auto deadline = t0 + std::chrono::duration<double, std::milli>(wait_ms);
  VkResult r;
  if (spin) {
    while ((r = vkGetFenceStatus(dev_, fence_)) == VK_NOT_READY && std::chrono::steady_clock::now() < deadline) {
    }
  } else {
    r = vkWaitForFences(dev_, 1, &fence_, VK_TRUE, static_cast<uint64_t>(wait_ms * 1e6));
  }
  if (r == VK_NOT_READY || r == VK_TIMEOUT) {
    // No Vulkan call cancels a submission: wait once more as long, so that
    // a launch that was only late leaves the device usable.
    r = vkWaitForFences(dev_, 1, &fence_, VK_TRUE, static_cast<uint64_t>(wait_ms * 1e6));
    if (r == VK_SUCCESS) {
      check(vkResetFences(dev_, 1, &fence_), "vkResetFences");
      throw LaunchTimeout(fmt::format("{} ran past its bound of {:.0f} ms and ended after {:.0f} ms", what,
                                      wait_ms, ns_since(t0) * 1e-6),
                          false);
    }
    lost_ = what;
    throw LaunchTimeout(fmt::format("{} ran past its bound of {:.0f} ms and was still running after {:.0f} ms: "
                                    "its fence never signalled, so the device is lost",
                                    what, wait_ms, ns_since(t0) * 1e-6),
                        true);
  }
  check(r, "waiting for the device");
  const double host_ns = ns_since(t0);
  check(vkResetFences(dev_, 1, &fence_), "vkResetFences");
  return host_ns;
}

void VkDev::barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                    VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb_, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void VkDev::reset_queries(VkCommandBuffer cb, uint32_t n) {
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

std::vector<uint64_t> VkDev::read_queries(uint32_t n) {
  std::vector<uint64_t> t(n);
  check(vkGetQueryPoolResults(dev_, queries_, 0, n, n * sizeof(uint64_t), t.data(), sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return t;
}

double VkDev::copy(VkBuffer src, size_t src_off, VkBuffer dst, size_t dst_off, size_t bytes, bool spin,
                   double* host_ns) {
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

// --- buffer contents ----------------------------------------------------------

void VkDev::check_range(const Buffer& b, size_t offset, size_t bytes, const char* what) const {
  if (offset + bytes > b.size_bytes())
    throw DeviceError(fmt::format("{}: {} bytes at offset {} exceed the {}-byte buffer", what, bytes, offset,
                                  b.size_bytes()));
}

void VkDev::write(Buffer& dst, size_t offset, std::span<const std::byte> src) {
  check_range(dst, offset, src.size(), "writing a buffer");
  Memory& st = staging(src.size());
  for (size_t done = 0; done < src.size();) {
    const size_t n = std::min(st.bytes, src.size() - done);
    std::memcpy(st.mapped, src.data() + done, n);
    copy(st.buffer, 0, as_vk(dst).mem.buffer, offset + done, n, false);
    done += n;
  }
}

void VkDev::read(const Buffer& src, size_t offset, std::span<std::byte> dst) {
  check_range(src, offset, dst.size(), "reading a buffer");
  Memory& st = staging(dst.size());
  for (size_t done = 0; done < dst.size();) {
    const size_t n = std::min(st.bytes, dst.size() - done);
    copy(as_vk(src).mem.buffer, offset + done, st.buffer, 0, n, false);
    std::memcpy(dst.data() + done, st.mapped, n);
    done += n;
  }
}

}  // namespace gpuscope::vulkan
