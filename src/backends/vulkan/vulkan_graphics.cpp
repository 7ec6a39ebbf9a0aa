// The GraphicsFacet's calls: what the device can do, the checks every call
// makes, and the timed passes. The objects they reuse are made in
// vulkan_graphics_objects.cpp.
#include "backends/vulkan/vulkan_graphics.hpp"

#include "backends/vulkan/vulkan_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

VkFormat vk_pixel_format(PixelFormat f) {
  switch (f) {
    case PixelFormat::kRgba8: return VK_FORMAT_R8G8B8A8_UNORM;
    case PixelFormat::kRgba16f: return VK_FORMAT_R16G16B16A16_SFLOAT;
    case PixelFormat::kRgba32f: return VK_FORMAT_R32G32B32A32_SFLOAT;
    case PixelFormat::kDepth32f: return VK_FORMAT_D32_SFLOAT;
  }
  return VK_FORMAT_UNDEFINED;
}

GraphicsSupport read_graphics_support(const Physical& p, bool graphics_queue) {
  GraphicsSupport s;
  if (!graphics_queue) {
    s.why_not = "no queue family has GRAPHICS, COMPUTE and timestamps";
    s.summary = "none: " + s.why_not;
    return s;
  }
  const VkPhysicalDeviceLimits& lim = p.limits();
  // The sample counts every attachment format supports, at framebuffer and image level.
  VkSampleCountFlags counts = lim.framebufferColorSampleCounts;
  // An attachment format: its optimal-tiling features include `features`,
  // and images of it with `usage` exist; narrows `counts`.
  auto usable = [&](VkFormat format, VkFormatFeatureFlags features, VkImageUsageFlags usage) {
    VkFormatProperties fp{};
    vkGetPhysicalDeviceFormatProperties(p.pd, format, &fp);
    if ((fp.optimalTilingFeatures & features) != features) return false;
    VkImageFormatProperties ip{};
    if (vkGetPhysicalDeviceImageFormatProperties(p.pd, format, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL, usage, 0,
                                                 &ip) != VK_SUCCESS)
      return false;
    counts &= ip.sampleCounts;
    return true;
  };
  GraphicsLimits& g = s.limits;
  for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f})
    if (usable(vk_pixel_format(f),
               VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BLEND_BIT |
                   VK_FORMAT_FEATURE_TRANSFER_SRC_BIT,
               VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT))
      g.colour_formats.push_back(f);
  if (g.colour_formats.empty() || g.colour_formats[0] != PixelFormat::kRgba8) {
    s.why_not = "R8G8B8A8_UNORM is not a blendable colour attachment format";
    s.summary = "none: " + s.why_not;
    g.colour_formats.clear();
    return s;
  }
  g.depth = usable(VK_FORMAT_D32_SFLOAT,
                   VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT | VK_FORMAT_FEATURE_TRANSFER_SRC_BIT,
                   VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
  if (g.depth) counts &= lim.framebufferDepthSampleCounts;
  for (uint32_t c = 1; c <= 64; c *= 2)
    if (counts & c) g.sample_counts.push_back(c);
  g.max_width = std::min(lim.maxFramebufferWidth, lim.maxImageDimension2D);
  g.max_height = std::min(lim.maxFramebufferHeight, lim.maxImageDimension2D);
  g.max_colour_attachments = std::min<uint32_t>(lim.maxColorAttachments, 8);  // rect.frag declares 8 outputs
  g.fragment_side_effects = p.f.features.fragmentStoresAndAtomics;
  g.pipeline_statistics = p.f.features.pipelineStatisticsQuery;
  g.max_anisotropy = p.f.features.samplerAnisotropy ? std::min(16.0f, lim.maxSamplerAnisotropy) : 0.0f;
  VkFormatProperties rgba8{};
  vkGetPhysicalDeviceFormatProperties(p.pd, VK_FORMAT_R8G8B8A8_UNORM, &rgba8);
  const VkFormatFeatureFlags tex = VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
                                   VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT |
                                   VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
  s.textures = (rgba8.optimalTilingFeatures & tex) == tex;
  const VkFormatFeatureFlags store = VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT;
  s.storage_frames = (rgba8.optimalTilingFeatures & store) == store;

  std::vector<std::string> formats;
  for (PixelFormat f : g.colour_formats) formats.emplace_back(format_name(f));
  s.summary = fmt::format(
      "queue family {}: up to {}x{}, {} colour attachments of {}{}, samples {}; fragment side effects {}, "
      "pipeline statistics {}, anisotropy {}, textures {}, storage frames {}",
      p.queue_family.value_or(0), g.max_width, g.max_height, g.max_colour_attachments, fmt::join(formats, "/"),
      g.depth ? ", depth32f" : ", no depth", fmt::join(g.sample_counts, "/"), g.fragment_side_effects ? "yes" : "no",
      g.pipeline_statistics ? "yes" : "no", g.max_anisotropy, s.textures ? "yes" : "no",
      s.storage_frames ? "yes" : "no");
  return s;
}

VkGraphics::VkGraphics(VkDev& dev, const GraphicsSupport& support)
    : d_(dev), dev_(dev.dev_), limits_(support.limits), textures_ok_(support.textures),
      storage_frames_ok_(support.storage_frames) {
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8},
                                        {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 8},
                                        {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 4}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = 8;
  pi.poolSizeCount = static_cast<uint32_t>(std::size(sizes));
  pi.pPoolSizes = sizes;
  check(vkCreateDescriptorPool(dev_, &pi, nullptr, &pool_), "vkCreateDescriptorPool (graphics)");
}

void VkGraphics::check_pass(const PassDesc& pass) const {
  if (pass.width == 0 || pass.height == 0)
    throw Unsupported(fmt::format("a render pass of {}x{} pixels", pass.width, pass.height));
  if (pass.width > limits_.max_width || pass.height > limits_.max_height)
    throw OutOfResources(fmt::format("a {}x{} framebuffer exceeds the device's {}x{}", pass.width, pass.height,
                                     limits_.max_width, limits_.max_height));
  if (pass.colour.empty() && !pass.depth) throw Unsupported("a render pass with no attachment");
  if (pass.colour.size() > limits_.max_colour_attachments)
    throw Unsupported(fmt::format("{} colour attachments (the device takes {})", pass.colour.size(),
                                  limits_.max_colour_attachments));
  for (PixelFormat f : pass.colour)
    if (std::find(limits_.colour_formats.begin(), limits_.colour_formats.end(), f) == limits_.colour_formats.end())
      throw Unsupported(fmt::format("{} is not a colour attachment format the device renders and blends into",
                                    format_name(f)));
  if (pass.depth && !limits_.depth) throw Unsupported("the device has no D32_SFLOAT depth attachments");
  const auto& sc = limits_.sample_counts;
  if (std::find(sc.begin(), sc.end(), pass.samples) == sc.end())
    throw Unsupported(fmt::format("{} samples per pixel (the device renders at {})", pass.samples,
                                  fmt::join(sc, ", ")));
}

std::vector<PassTiming> VkGraphics::run_passes(Framebuffer& fb, VkPipeline pipe, uint32_t rects, int passes,
                                               const std::function<void(VkCommandBuffer)>& prepare) {
  const auto n = static_cast<uint32_t>(std::max(passes, 1));
  const VkQueryPool stats = limits_.pipeline_statistics ? stats_pool(n) : VK_NULL_HANDLE;
  std::vector<VkClearValue> clears(fb.key.colour.size() + (fb.key.depth ? 1 : 0));  // zero: colour 0, depth 0
  d_.submit([&](VkCommandBuffer cb) {
    d_.reset_queries(cb, 2 * n);
    if (stats) vkCmdResetQueryPool(cb, stats, 0, n);
    prepare(cb);  // descriptors, push constants, resets: before the first timestamp
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipe);
    const VkViewport vp{0, 0, static_cast<float>(fb.width), static_cast<float>(fb.height), 0, 1};
    const VkRect2D all{{0, 0}, {fb.width, fb.height}};
    vkCmdSetViewport(cb, 0, 1, &vp);
    vkCmdSetScissor(cb, 0, 1, &all);
    VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    bi.renderPass = render_pass(fb.key);
    bi.framebuffer = fb.fb;
    bi.renderArea = all;
    bi.clearValueCount = static_cast<uint32_t>(clears.size());
    bi.pClearValues = clears.data();
    for (uint32_t i = 0; i < n; ++i) {
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d_.queries_, 2 * i);
      if (stats) vkCmdBeginQuery(cb, stats, i, 0);
      vkCmdBeginRenderPass(cb, &bi, VK_SUBPASS_CONTENTS_INLINE);
      vkCmdDraw(cb, 6, rects, 0, 0);
      vkCmdEndRenderPass(cb);
      if (stats) vkCmdEndQuery(cb, stats, i);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d_.queries_, 2 * i + 1);
    }
  });
  const auto t = d_.read_queries(2 * n);
  std::vector<uint64_t> counted(n);
  if (stats)
    check(vkGetQueryPoolResults(dev_, stats, 0, n, n * sizeof(uint64_t), counted.data(), sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults (pipeline statistics)");
  std::vector<PassTiming> out(n);
  for (uint32_t i = 0; i < n; ++i) {
    out[i].ns = d_.ticks_ns(t[2 * i], t[2 * i + 1]);
    if (stats) out[i].fragments = counted[i];
  }
  return out;
}

RasterTrace VkGraphics::trace_raster(const PassDesc& pass, uint32_t max_tickets) {
  if (!limits_.fragment_side_effects)
    throw Unsupported("the device's fragment shaders cannot write storage buffers (fragmentStoresAndAtomics)");
  check_pass(pass);
  const uint64_t fragments = uint64_t{pass.width} * pass.height * pass.rects;
  if (fragments >= (uint64_t{1} << 32))
    throw Unsupported(fmt::format("{} fragments overflow the 32-bit ticket counter", fragments));
  const uint64_t log_bytes = std::max<uint64_t>(max_tickets, 1) * 8;
  if (log_bytes > d_.info_.max_alloc_bytes)
    throw OutOfResources(fmt::format("a log of {} tickets ({} bytes) exceeds the device's largest buffer",
                                     max_tickets, log_bytes));
  if (!counter_) counter_ = d_.create_buffer(4);
  if (!log_ || log_->size_bytes() < log_bytes) {
    log_.reset();
    log_ = d_.create_buffer(log_bytes);
  }
  const PassKey key{pass.colour, pass.depth, pass.samples};
  Framebuffer& fb = framebuffer(key, pass.width, pass.height);
  const VkPipeline pipe = pipeline(key, FragKind::kTrace, pass.blend, 0);
  Program& prog = program(FragKind::kTrace);
  const VkBuffer counter = VkDev::as_vk(*counter_).mem.buffer, log = VkDev::as_vk(*log_).mem.buffer;
  const VkDescriptorBufferInfo infos[] = {{counter, 0, VK_WHOLE_SIZE}, {log, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w[2];
  for (uint32_t b = 0; b < 2; ++b) {
    w[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[b].dstSet = prog.set;
    w[b].dstBinding = b;
    w[b].descriptorCount = 1;
    w[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[b].pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(dev_, 2, w, 0, nullptr);
  const uint32_t push[2] = {pass.width, max_tickets};
  RasterTrace out;
  out.timing = run_passes(fb, pipe, pass.rects, 1, [&](VkCommandBuffer cb) {
    vkCmdFillBuffer(cb, counter, 0, 4, 0);
    d_.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, prog.layout, 0, 1, &prog.set, 0, nullptr);
    vkCmdPushConstants(cb, prog.layout, kGraphicsStages, 0, sizeof(push), push);
  })[0];
  uint32_t tickets = 0;
  d_.read(*counter_, 0, std::as_writable_bytes(std::span(&tickets, 1)));
  out.tickets = tickets;
  const uint32_t logged = std::min(tickets, max_tickets);
  std::vector<uint32_t> entries(size_t{logged} * 2);
  if (logged > 0) d_.read(*log_, 0, std::as_writable_bytes(std::span(entries)));
  out.pixel.resize(logged);
  out.rect.resize(logged);
  for (uint32_t i = 0; i < logged; ++i) {
    out.pixel[i] = entries[2 * i];
    out.rect[i] = entries[2 * i + 1];
  }
  return out;
}

FillResult VkGraphics::fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) {
  check_pass(pass);
  const PassKey key{pass.colour, pass.depth, pass.samples};
  FragKind kind = FragKind::kFlat;
  int mode = 0;
  if (shading.textured) {
    if (!textures_ok_) throw Unsupported("R8G8B8A8_UNORM cannot be sampled with linear filtering here");
    if (pass.colour.empty()) throw Unsupported("textured shading writes colour: the pass has no colour attachment");
    if (shading.filter == TextureFilter::kAniso && limits_.max_anisotropy == 0)
      throw Unsupported("the device has no anisotropic filtering (samplerAnisotropy)");
    if (shading.texture_px == 0 || shading.texture_samples == 0)
      throw Unsupported(fmt::format("a texture of {} pixels a side sampled {} times", shading.texture_px,
                                    shading.texture_samples));
    kind = FragKind::kTextured;
    mode = static_cast<int>(shading.filter);
    texture(shading.texture_px);  // made (and uploaded) before the passes are recorded
  }
  Framebuffer& fb = framebuffer(key, pass.width, pass.height);
  const VkPipeline pipe = pipeline(key, kind, pass.blend, mode);
  Program& prog = program(kind);
  if (kind == FragKind::kTextured) {
    const VkDescriptorImageInfo ii{sampler(shading.filter), texture(shading.texture_px).image.view,
                                   VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = prog.set;
    w.dstBinding = 0;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    w.pImageInfo = &ii;
    vkUpdateDescriptorSets(dev_, 1, &w, 0, nullptr);
  }
  const uint32_t push[2] = {shading.texture_px, shading.texture_samples};
  FillResult out;
  out.passes = run_passes(fb, pipe, pass.rects, passes, [&](VkCommandBuffer cb) {
    if (kind != FragKind::kTextured) return;
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, prog.layout, 0, 1, &prog.set, 0, nullptr);
    vkCmdPushConstants(cb, prog.layout, kGraphicsStages, 0, sizeof(push), push);
  });
  if (read_back) out.pixels = read_attachment(fb);
  return out;
}

// The first colour attachment (resolved where multisampled: every sample
// of a pixel holds the same value in these passes, so the resolve is
// sample 0), or the depth attachment of a depth-only pass, through the
// staging buffer as many rows a copy as it holds.
std::vector<std::byte> VkGraphics::read_attachment(Framebuffer& fb) {
  const bool depth = fb.key.colour.empty();
  if (depth && fb.key.samples > 1) throw Unsupported("reading back a multisampled depth attachment");
  const PixelFormat format = depth ? PixelFormat::kDepth32f : fb.key.colour[0];
  const VkImageAspectFlags aspect = depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT;
  VkImage src = depth ? fb.depth.image : fb.colour[0].image;
  const VkImageLayout attached =
      depth ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  const bool resolve = fb.key.samples > 1;
  if (resolve && !fb.resolved.image)
    fb.resolved = make_image(vk_pixel_format(format), fb.width, fb.height, 1, VK_SAMPLE_COUNT_1_BIT,
                             VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, aspect);
  d_.submit([&](VkCommandBuffer cb) {
    image_barrier(cb, src, aspect, attached, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 1);
    if (!resolve) return;
    image_barrier(cb, fb.resolved.image, aspect, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1);
    VkImageResolve r{};
    r.srcSubresource = {aspect, 0, 0, 1};
    r.dstSubresource = {aspect, 0, 0, 1};
    r.extent = {fb.width, fb.height, 1};
    vkCmdResolveImage(cb, src, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, fb.resolved.image,
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &r);
    image_barrier(cb, fb.resolved.image, aspect, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 1);
  });
  if (resolve) src = fb.resolved.image;
  const size_t row_bytes = size_t{fb.width} * pixel_bytes(format);
  std::vector<std::byte> pixels(row_bytes * fb.height);
  Memory& st = d_.staging(pixels.size());
  if (row_bytes > st.bytes)
    throw OutOfResources(fmt::format("a row of {} bytes exceeds the {}-byte staging buffer", row_bytes, st.bytes));
  const uint32_t rows_per_copy = static_cast<uint32_t>(std::min<size_t>(st.bytes / row_bytes, fb.height));
  for (uint32_t row = 0; row < fb.height; row += rows_per_copy) {
    const uint32_t rows = std::min(rows_per_copy, fb.height - row);
    d_.submit([&](VkCommandBuffer cb) {
      VkBufferImageCopy region{};
      region.imageSubresource = {aspect, 0, 0, 1};
      region.imageOffset = {0, static_cast<int32_t>(row), 0};
      region.imageExtent = {fb.width, rows, 1};
      vkCmdCopyImageToBuffer(cb, src, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, st.buffer, 1, &region);
    });
    std::memcpy(pixels.data() + row * row_bytes, st.mapped, rows * row_bytes);
  }
  return pixels;
}

FrameTiming VkGraphics::frame(const FrameDesc& f) {
  if (f.width == 0 || f.height == 0) throw Unsupported(fmt::format("a frame of {}x{} pixels", f.width, f.height));
  if (f.width > limits_.max_width || f.height > limits_.max_height)
    throw OutOfResources(fmt::format("a {}x{} frame exceeds the device's {}x{}", f.width, f.height,
                                     limits_.max_width, limits_.max_height));
  if (f.storage_write && !storage_frames_ok_)
    throw Unsupported("R8G8B8A8_UNORM is not a storage image format here");
  FrameImage& im = frame_image(f.width, f.height, f.storage_write);
  if (!sum_) sum_ = d_.create_buffer(8);
  const VkBuffer sum = VkDev::as_vk(*sum_).mem.buffer;
  Program& read = compute_program(false);
  const VkImageLayout layout = f.storage_write ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  const VkDescriptorImageInfo sampled{frame_sampler(), im.image.view, layout};
  const VkDescriptorImageInfo stored{VK_NULL_HANDLE, im.image.view, VK_IMAGE_LAYOUT_GENERAL};
  const VkDescriptorBufferInfo sum_info{sum, 0, VK_WHOLE_SIZE};
  std::vector<VkWriteDescriptorSet> w(2, {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET});
  w[0].dstSet = read.set;
  w[0].dstBinding = 0;
  w[0].descriptorCount = 1;
  w[0].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
  w[0].pImageInfo = &sampled;
  w[1].dstSet = read.set;
  w[1].dstBinding = 1;
  w[1].descriptorCount = 1;
  w[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  w[1].pBufferInfo = &sum_info;
  Program* store = nullptr;
  if (f.storage_write) {
    store = &compute_program(true);
    VkWriteDescriptorSet& s = w.emplace_back(VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET});
    s.dstSet = store->set;
    s.dstBinding = 0;
    s.descriptorCount = 1;
    s.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    s.pImageInfo = &stored;
  }
  vkUpdateDescriptorSets(dev_, static_cast<uint32_t>(w.size()), w.data(), 0, nullptr);
  const uint32_t pattern = f.pattern == FramePattern::kFlat ? 0 : f.pattern == FramePattern::kBlocks ? 1 : 2;
  const uint32_t write_push[5] = {f.width, f.height, pattern, f.block_px, f.seed};
  const uint32_t groups_x = (f.width + 15) / 16, groups_y = (f.height + 15) / 16;
  const VkPipeline write_pipe = f.storage_write ? compute_pipeline(true) : frame_pipeline();
  const VkPipeline read_pipe = compute_pipeline(false);
  Program& frame_prog = program(FragKind::kFrame);
  d_.submit([&](VkCommandBuffer cb) {
    d_.reset_queries(cb, 4);
    vkCmdFillBuffer(cb, sum, 0, 8, 0);
    d_.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d_.queries_, 0);
    if (f.storage_write) {
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, write_pipe);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, store->layout, 0, 1, &store->set, 0, nullptr);
      vkCmdPushConstants(cb, store->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(write_push), write_push);
      vkCmdDispatch(cb, groups_x, groups_y, 1);
    } else {
      const VkRect2D all{{0, 0}, {f.width, f.height}};
      VkRenderPassBeginInfo bi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
      bi.renderPass = frame_pass();
      bi.framebuffer = im.fb;
      bi.renderArea = all;
      vkCmdBeginRenderPass(cb, &bi, VK_SUBPASS_CONTENTS_INLINE);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, write_pipe);
      const VkViewport vp{0, 0, static_cast<float>(f.width), static_cast<float>(f.height), 0, 1};
      vkCmdSetViewport(cb, 0, 1, &vp);
      vkCmdSetScissor(cb, 0, 1, &all);
      vkCmdPushConstants(cb, frame_prog.layout, kGraphicsStages, 0, 3 * sizeof(uint32_t), write_push + 2);
      vkCmdDraw(cb, 6, 1, 0, 0);
      vkCmdEndRenderPass(cb);
    }
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d_.queries_, 1);
    // The write's results visible to the read (the render pass's own
    // dependency does this for a rendered frame; a storage write needs it).
    d_.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
               VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d_.queries_, 2);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, read_pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, read.layout, 0, 1, &read.set, 0, nullptr);
    vkCmdPushConstants(cb, read.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(uint32_t), write_push);
    vkCmdDispatch(cb, groups_x, groups_y, 1);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d_.queries_, 3);
  });
  const auto t = d_.read_queries(4);
  uint32_t halves[2] = {0, 0};
  d_.read(*sum_, 0, std::as_writable_bytes(std::span(halves)));
  FrameTiming out;
  out.write_ns = d_.ticks_ns(t[0], t[1]);
  out.read_ns = d_.ticks_ns(t[2], t[3]);
  out.checksum = (uint64_t{halves[1]} << 32) | halves[0];
  return out;
}

}  // namespace gpuscope::vulkan
