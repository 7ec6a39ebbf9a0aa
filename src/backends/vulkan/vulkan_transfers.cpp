// The HostTransferFacet of a Vulkan device: copies through staging or
// pinned (host-visible) memory, host-visible device buffers, and maps.
#include "backends/vulkan/vulkan_device.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

std::unique_ptr<Buffer> VkDev::create_host_buffer(size_t bytes) {
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

std::unique_ptr<HostStaging> VkDev::create_pinned_host(size_t bytes) {
  auto m = allocate(bytes, kTransfer, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (!m) throw OutOfResources(fmt::format("no host-visible memory for {} pinned bytes", bytes));
  auto pinned = std::make_unique<VkPinnedHost>(*this, *m);
  pinned_.push_back(pinned.get());
  return pinned;
}

std::optional<std::pair<VkBuffer, size_t>> VkDev::pinned_at(const std::byte* ptr, size_t n) const {
  for (const VkPinnedHost* p : pinned_) {
    const auto* base = static_cast<const std::byte*>(p->mem.mapped);
    if (ptr >= base && ptr + n <= base + p->mem.bytes)
      return std::make_pair(p->mem.buffer, static_cast<size_t>(ptr - base));
  }
  return std::nullopt;
}

// A copy from pinned memory is one device copy; from pageable memory it
// is the host's copy into staging and then the device's, chunk by chunk.
TransferTiming VkDev::timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) {
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

TransferTiming VkDev::timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) {
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
MapTiming VkDev::timed_map(Buffer& buffer, MapDirection dir,
                           const std::function<void(std::span<std::byte>)>& touch) {
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

}  // namespace gpuscope::vulkan
