#include "backends/vulkan/vulkan_device.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <variant>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

std::array<uint32_t, 4> VkDev::config_of(const VkKern& k, const LaunchShape& shape) const {
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
  return cfg;
}

VkDev::Prepared VkDev::prepare(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args) {
  const std::array<uint32_t, 4> cfg = config_of(k, shape);
  const auto& lim = p_->limits();
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
  // Scalars in order, each aligned to its size, then buffer addresses;
  // buffers and images are descriptors (bind_arguments()).
  auto put = [&p](const void* v, size_t n) {
    while (p.push.size() % n) p.push.push_back(std::byte{0});
    const auto* b = static_cast<const std::byte*>(v);
    p.push.insert(p.push.end(), b, b + n);
  };
  for (const auto& a : args) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<T, Buffer*> && !std::is_same_v<T, Image*>) put(&v, sizeof(v));
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
  for (const SampledBinding& s : k.shader.sampled_bindings) {
    const bool texel = s.kind == SampledKind::kTexelBuffer;
    const ImageKind want = texel ? ImageKind::kBuffer1D : ImageKind::k2D;
    const auto* img = s.binding < args.size() ? std::get_if<Image*>(&args[s.binding]) : nullptr;
    if (!img || !*img || (*img)->desc().kind != want)
      throw DeviceError(fmt::format("{}: the shader samples binding {} as {}, but argument {} is not {}", k.name(),
                                    s.binding, texel ? "a texel buffer" : "a 2D image", s.binding,
                                    texel ? "a 1D buffer image" : "a 2D image"));
  }
  p.pipeline = pipeline(k, cfg);
  k.last_config = cfg;
  return p;
}

VkDescriptorSet VkDev::bind_arguments(VkKern& k, std::span<const KernelArg> args) {
  check(vkResetDescriptorPool(dev_, desc_pool_, 0), "vkResetDescriptorPool");
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = desc_pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &k.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(dev_, &ai, &set), "vkAllocateDescriptorSets");
  // Reserved in full: the writes point into these.
  std::vector<VkDescriptorBufferInfo> infos;
  infos.reserve(k.shader.buffer_bindings.size());
  std::vector<VkDescriptorImageInfo> image_infos;
  image_infos.reserve(k.shader.sampled_bindings.size());
  std::vector<VkBufferView> views;
  views.reserve(k.shader.sampled_bindings.size());
  std::vector<VkWriteDescriptorSet> writes;
  auto write = [&](uint32_t binding, VkDescriptorType type) -> VkWriteDescriptorSet& {
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = binding;
    w.descriptorCount = 1;
    w.descriptorType = type;
    return writes.emplace_back(w);
  };
  for (uint32_t b : k.shader.buffer_bindings) {
    const VkBuf& buf = as_vk(*std::get<Buffer*>(args[b]));
    infos.push_back({buf.mem.buffer, 0, VK_WHOLE_SIZE});
    write(b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).pBufferInfo = &infos.back();
  }
  for (const SampledBinding& s : k.shader.sampled_bindings) {
    const auto& img = static_cast<const VkImg&>(*std::get<Image*>(args[s.binding]));
    VkWriteDescriptorSet& w = write(s.binding, descriptor_type(s.kind));
    if (s.kind == SampledKind::kTexelBuffer) {
      w.pTexelBufferView = &views.emplace_back(img.texel_view);
    } else {
      w.pImageInfo = &image_infos.emplace_back(
          VkDescriptorImageInfo{sampler(), img.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
    }
  }
  if (!writes.empty())
    vkUpdateDescriptorSets(dev_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

std::vector<uint64_t> VkDev::dispatch(VkKern& k, const LaunchShape& shape, std::span<const KernelArg> args,
                                      int count, bool spin, double* host_ns) {
  Prepared p = prepare(k, shape, args);
  VkDescriptorSet set = bind_arguments(k, args);
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
      spin, launch_bound().wait_ms(count),
      fmt::format("{} of {}", count == 1 ? "a launch" : fmt::format("a batch of {} launches", count), k.name()));
  if (host_ns) *host_ns = h;
  return read_queries(2 * n);
}

double VkDev::launch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args) {
  auto& k = static_cast<VkKern&>(kernel);
  const auto t = dispatch(k, shape, args, 1, false, nullptr);
  return ticks_ns(t[0], t[1]);
}

LaunchBatch VkDev::launch_batch(Kernel& kernel, const LaunchShape& shape, std::span<const KernelArg> args,
                                int count) {
  auto& k = static_cast<VkKern&>(kernel);
  count = std::max(count, 1);
  LaunchBatch b;
  // Paired before the submission, so that pairing costs no launch time.
  ClockPairing pairing;
  if (calibrated_->usable()) pairing = calibrated_->pair();
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = dispatch(k, shape, args, count, true, nullptr);
  b.host_ns = ns_since(t0);
  b.events = batch_events(t, count, calibrated_->usable() ? &pairing : nullptr);
  return b;
}

std::vector<EventTimes> VkDev::batch_events(const std::vector<uint64_t>& t, int count,
                                            const ClockPairing* pairing) const {
  double origin = 0;  // ns after the first start
  if (pairing) origin = host_on_device_ns(*pairing, submit_host_ns_, t[0], ts_period_, ts_mask_);
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

}  // namespace gpuscope::vulkan
