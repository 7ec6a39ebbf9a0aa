// frame(): one frame written (rendered through a colour attachment, or
// stored by a compute shader into a storage image) and read back by a
// compute pass that sums its texels, each timed; the frame's image, its
// render pass and sampler, shared by the frames of one size and kind.
#include "backends/vulkan/vulkan_graphics.hpp"

#include "backends/vulkan/vulkan_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

// The frame's one RGBA8 attachment, kept in SHADER_READ_ONLY_OPTIMAL between
// passes and not cleared (every pixel is drawn), so a redraw of the same
// frame meets its previous content.
VkRenderPass VkGraphics::frame_pass() {
  if (frame_pass_) return frame_pass_;
  const VkAttachmentDescription att{0,
                                    VK_FORMAT_R8G8B8A8_UNORM,
                                    VK_SAMPLE_COUNT_1_BIT,
                                    VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                    VK_ATTACHMENT_STORE_OP_STORE,
                                    VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                    VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                    VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                                    VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
  const VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &ref;
  const VkSubpassDependency deps[] = {
      {VK_SUBPASS_EXTERNAL, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0,
       VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, 0},
      {0, VK_SUBPASS_EXTERNAL, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
       VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT, 0}};
  VkRenderPassCreateInfo ci{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  ci.attachmentCount = 1;
  ci.pAttachments = &att;
  ci.subpassCount = 1;
  ci.pSubpasses = &sub;
  ci.dependencyCount = 2;
  ci.pDependencies = deps;
  check(vkCreateRenderPass(dev_, &ci, nullptr, &frame_pass_), "vkCreateRenderPass (frame)");
  return frame_pass_;
}

VkSampler VkGraphics::frame_sampler() {
  if (frame_sampler_) return frame_sampler_;
  VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  si.magFilter = VK_FILTER_NEAREST;
  si.minFilter = VK_FILTER_NEAREST;
  si.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  check(vkCreateSampler(dev_, &si, nullptr, &frame_sampler_), "vkCreateSampler (frame)");
  return frame_sampler_;
}

// A rendered frame's image is a colour attachment kept in
// SHADER_READ_ONLY_OPTIMAL; a stored one a storage image kept in GENERAL.
FrameImage& VkGraphics::frame_image(uint32_t w, uint32_t h, bool storage) {
  const auto key = std::make_tuple(w, h, storage);
  if (auto it = frames_.find(key); it != frames_.end()) return it->second;
  // A probe draws frames of a few sizes; past kFrames (size, kind) pairs the
  // others are dropped (a frame drawn after that starts from new content).
  if (frames_.size() >= kFrames) {
    for (auto& [k, f] : frames_) {
      if (f.fb) vkDestroyFramebuffer(dev_, f.fb, nullptr);
      free_image(f.image);
    }
    frames_.clear();
  }
  FrameImage f;
  f.image = make_image(VK_FORMAT_R8G8B8A8_UNORM, w, h, 1, VK_SAMPLE_COUNT_1_BIT,
                       VK_IMAGE_USAGE_SAMPLED_BIT |
                           (storage ? VK_IMAGE_USAGE_STORAGE_BIT : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT),
                       VK_IMAGE_ASPECT_COLOR_BIT);
  try {
    d_.submit([&](VkCommandBuffer cb) {
      image_barrier(cb, f.image.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                    storage ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, 1);
    });
    if (!storage) {
      VkFramebufferCreateInfo ci{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
      ci.renderPass = frame_pass();
      ci.attachmentCount = 1;
      ci.pAttachments = &f.image.view;
      ci.width = w;
      ci.height = h;
      ci.layers = 1;
      check(vkCreateFramebuffer(dev_, &ci, nullptr, &f.fb), "vkCreateFramebuffer (frame)");
    }
  } catch (...) {
    free_image(f.image);
    throw;
  }
  return frames_.emplace(key, f).first->second;
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
      vkCmdDraw(cb, 3, 1, 0, 0);
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
