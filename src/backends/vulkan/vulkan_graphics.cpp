// The GraphicsFacet's render passes: the checks every pass makes, the timed
// passes, trace_raster, fill and the attachment read-back. The objects they
// reuse are made in vulkan_graphics_objects.cpp and _pipelines.cpp.
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
      vkCmdDraw(cb, 3, rects, 0, 0);
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

RasterTrace VkGraphics::trace_raster(const PassDesc& pass, uint32_t stride) {
  if (!limits_.fragment_side_effects)
    throw Unsupported("the device's fragment shaders cannot write storage buffers (fragmentStoresAndAtomics)");
  check_pass(pass);
  if (stride == 0) throw DeviceError("trace_raster: a stride of 0 pixels");
  const uint64_t fragments = uint64_t{pass.width} * pass.height * pass.rects;
  if (fragments >= (uint64_t{1} << 32) - 1)
    throw Unsupported(fmt::format("{} fragments overflow the 32-bit ticket counter", fragments));
  RasterTrace out;
  out.stride = stride;
  out.cells_x = (pass.width + stride - 1) / stride;
  out.cells_y = (pass.height + stride - 1) / stride;
  const uint64_t cells = uint64_t{out.cells_x} * out.cells_y * pass.rects;
  const uint64_t field_bytes = cells * 4;
  if (field_bytes > d_.info_.max_alloc_bytes)
    throw OutOfResources(
        fmt::format("a field of {} tickets ({} bytes) exceeds the device's largest buffer", cells, field_bytes));
  if (!counter_) counter_ = d_.create_buffer(4);
  if (!field_ || field_->size_bytes() < field_bytes) {
    field_.reset();
    field_ = d_.create_buffer(field_bytes);
  }
  const PassKey key{pass.colour, pass.depth, pass.samples};
  Framebuffer& fb = framebuffer(key, pass.width, pass.height);
  const VkPipeline pipe = pipeline(key, FragKind::kTrace, pass.blend, 0);
  Program& prog = program(FragKind::kTrace);
  const VkBuffer counter = VkDev::as_vk(*counter_).mem.buffer, field = VkDev::as_vk(*field_).mem.buffer;
  const VkDescriptorBufferInfo infos[] = {{counter, 0, VK_WHOLE_SIZE}, {field, 0, VK_WHOLE_SIZE}};
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
  const uint32_t push[3] = {stride, out.cells_x, out.cells_y};
  out.timing = run_passes(fb, pipe, pass.rects, 1, [&](VkCommandBuffer cb) {
    vkCmdFillBuffer(cb, counter, 0, 4, 0);
    vkCmdFillBuffer(cb, field, 0, field_bytes, RasterTrace::kNoTicket);
    d_.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, prog.layout, 0, 1, &prog.set, 0, nullptr);
    vkCmdPushConstants(cb, prog.layout, kGraphicsStages, 0, sizeof(push), push);
  })[0];
  uint32_t tickets = 0;
  d_.read(*counter_, 0, std::as_writable_bytes(std::span(&tickets, 1)));
  out.tickets = tickets;
  out.ticket.resize(cells);
  d_.read(*field_, 0, std::as_writable_bytes(std::span(out.ticket)));
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
  const VkPipeline pipe = pipeline(key, kind, pass.blend, mode, shading.may_discard);
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
  // rect.frag's push constants: textured { size, samples }, then under
  // MAY_DISCARD `never`, a rectangle index no draw reaches.
  std::vector<uint32_t> push;
  if (kind == FragKind::kTextured) push = {shading.texture_px, shading.texture_samples};
  if (shading.may_discard) push.push_back(0xFFFFFFFFu);
  FillResult out;
  out.passes = run_passes(fb, pipe, pass.rects, passes, [&](VkCommandBuffer cb) {
    if (kind == FragKind::kTextured)
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, prog.layout, 0, 1, &prog.set, 0, nullptr);
    if (!push.empty())
      vkCmdPushConstants(cb, prog.layout, kGraphicsStages, 0, static_cast<uint32_t>(push.size() * 4), push.data());
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

}  // namespace gpuscope::vulkan
