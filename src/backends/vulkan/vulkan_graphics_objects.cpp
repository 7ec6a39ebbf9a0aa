// The objects the graphics facet reuses, each made on first use and cached
// by what distinguishes it: render passes by attachments, framebuffers by
// (attachments, size) (the few most recent kept), textures by size (a few),
// samplers by filter; and the facet's teardown of everything it made.
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

VkGraphics::~VkGraphics() {
  for (auto& fb : framebuffers_) free_framebuffer(fb);
  for (auto& [key, f] : frames_) {
    if (f.fb) vkDestroyFramebuffer(dev_, f.fb, nullptr);
    free_image(f.image);
  }
  for (auto& [px, t] : textures_) free_image(t.image);
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(dev_, p, nullptr);
  for (VkPipeline p : {frame_pipeline_, compute_pipelines_[0], compute_pipelines_[1]})
    if (p) vkDestroyPipeline(dev_, p, nullptr);
  auto drop = [this](Program& p) {
    if (p.layout) vkDestroyPipelineLayout(dev_, p.layout, nullptr);
    if (p.set_layout) vkDestroyDescriptorSetLayout(dev_, p.set_layout, nullptr);
  };
  for (auto& [kind, p] : programs_) drop(p);
  for (Program& p : compute_programs_) drop(p);
  for (auto& [name, m] : modules_) vkDestroyShaderModule(dev_, m, nullptr);
  for (auto& [key, rp] : passes_) vkDestroyRenderPass(dev_, rp, nullptr);
  if (frame_pass_) vkDestroyRenderPass(dev_, frame_pass_, nullptr);
  for (auto& [f, s] : samplers_) vkDestroySampler(dev_, s, nullptr);
  if (frame_sampler_) vkDestroySampler(dev_, frame_sampler_, nullptr);
  if (stats_) vkDestroyQueryPool(dev_, stats_, nullptr);
  vkDestroyDescriptorPool(dev_, pool_, nullptr);
}

// --- images -------------------------------------------------------------------

GfxImage VkGraphics::make_image(VkFormat format, uint32_t w, uint32_t h, uint32_t levels,
                                VkSampleCountFlagBits samples, VkImageUsageFlags usage, VkImageAspectFlags aspect) {
  GfxImage img;
  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = VK_IMAGE_TYPE_2D;
  ci.format = format;
  ci.extent = {w, h, 1};
  ci.mipLevels = levels;
  ci.arrayLayers = 1;
  ci.samples = samples;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  check(vkCreateImage(dev_, &ci, nullptr, &img.image), "vkCreateImage (graphics)");
  try {
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(dev_, img.image, &req);
    if (req.size > d_.p_->p11.maxMemoryAllocationSize)
      throw OutOfResources(fmt::format("a {}x{} image of {} bytes exceeds the device's largest allocation of {}", w,
                                       h, req.size, d_.p_->p11.maxMemoryAllocationSize));
    std::optional<uint32_t> type;
    for (int pass = 0; pass < 2 && !type; ++pass)
      for (uint32_t i = 0; i < d_.p_->mem.memoryTypeCount && !type; ++i)
        if ((req.memoryTypeBits & (1u << i)) &&
            (pass == 1 || (d_.p_->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)))
          type = i;
    if (!type) throw OutOfResources("no memory type for a graphics image");
    VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mi.allocationSize = req.size;
    mi.memoryTypeIndex = *type;
    check(vkAllocateMemory(dev_, &mi, nullptr, &img.memory), "vkAllocateMemory (graphics image)");
    check(vkBindImageMemory(dev_, img.image, img.memory, 0), "vkBindImageMemory");
    constexpr VkImageUsageFlags kViewed = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                          VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
    if (!(usage & kViewed)) return img;  // a transfer-only image (the MSAA resolve) has no view
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = img.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = format;
    vi.subresourceRange = {aspect, 0, levels, 0, 1};
    check(vkCreateImageView(dev_, &vi, nullptr, &img.view), "vkCreateImageView (graphics)");
  } catch (...) {
    free_image(img);
    throw;
  }
  return img;
}

void VkGraphics::free_image(GfxImage& img) {
  if (d_.lost()) {  // a running command may still use it (~VkDev)
    img = GfxImage{};
    return;
  }
  if (img.view) vkDestroyImageView(dev_, img.view, nullptr);
  if (img.image) vkDestroyImage(dev_, img.image, nullptr);
  if (img.memory) vkFreeMemory(dev_, img.memory, nullptr);
  img = GfxImage{};
}

void VkGraphics::image_barrier(VkCommandBuffer cb, VkImage image, VkImageAspectFlags aspect, VkImageLayout from,
                               VkImageLayout to, uint32_t levels) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, 0, levels, 0, 1};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
                       nullptr, 1, &b);
}

// --- render passes and framebuffers ---------------------------------------------

// Attachments cleared at the start (from UNDEFINED: nothing before is kept)
// and stored at the end, left in their attachment layouts; the pass waits
// for the previous pass's (or read-back's) use of them.
VkRenderPass VkGraphics::render_pass(const PassKey& key) {
  if (auto it = passes_.find(key); it != passes_.end()) return it->second;
  const auto samples = static_cast<VkSampleCountFlagBits>(key.samples);
  std::vector<VkAttachmentDescription> att;
  std::vector<VkAttachmentReference> colour;
  for (PixelFormat f : key.colour) {
    colour.push_back({static_cast<uint32_t>(att.size()), VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL});
    att.push_back({0, vk_pixel_format(f), samples, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
                   VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
                   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL});
  }
  const VkAttachmentReference depth{static_cast<uint32_t>(att.size()),
                                    VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  if (key.depth)
    att.push_back({0, VK_FORMAT_D32_SFLOAT, samples, VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
                   VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
                   VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL});
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = static_cast<uint32_t>(colour.size());
  sub.pColorAttachments = colour.data();
  sub.pDepthStencilAttachment = key.depth ? &depth : nullptr;
  constexpr VkPipelineStageFlags kAttach = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                                           VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                                           VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  constexpr VkAccessFlags kAttachWrite =
      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  constexpr VkAccessFlags kAttachAll = kAttachWrite | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                                       VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
  const VkSubpassDependency deps[] = {
      {VK_SUBPASS_EXTERNAL, 0, kAttach | VK_PIPELINE_STAGE_TRANSFER_BIT, kAttach, kAttachWrite, kAttachAll, 0},
      {0, VK_SUBPASS_EXTERNAL, kAttach, kAttach | VK_PIPELINE_STAGE_TRANSFER_BIT, kAttachWrite,
       kAttachAll | VK_ACCESS_TRANSFER_READ_BIT, 0}};
  VkRenderPassCreateInfo ci{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  ci.attachmentCount = static_cast<uint32_t>(att.size());
  ci.pAttachments = att.data();
  ci.subpassCount = 1;
  ci.pSubpasses = &sub;
  ci.dependencyCount = 2;
  ci.pDependencies = deps;
  VkRenderPass rp = VK_NULL_HANDLE;
  check(vkCreateRenderPass(dev_, &ci, nullptr, &rp), "vkCreateRenderPass");
  passes_.emplace(key, rp);
  return rp;
}

Framebuffer& VkGraphics::framebuffer(const PassKey& key, uint32_t w, uint32_t h) {
  for (auto it = framebuffers_.begin(); it != framebuffers_.end(); ++it)
    if (it->key == key && it->width == w && it->height == h) {
      framebuffers_.splice(framebuffers_.begin(), framebuffers_, it);
      return framebuffers_.front();
    }
  while (framebuffers_.size() >= kFramebuffers) {
    free_framebuffer(framebuffers_.back());
    framebuffers_.pop_back();
  }
  const VkRenderPass rp = render_pass(key);
  Framebuffer& fb = framebuffers_.emplace_front();
  fb.key = key;
  fb.width = w;
  fb.height = h;
  try {
    const auto samples = static_cast<VkSampleCountFlagBits>(key.samples);
    std::vector<VkImageView> views;
    for (PixelFormat f : key.colour) {
      fb.colour.push_back(make_image(vk_pixel_format(f), w, h, 1, samples,
                                     VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                                     VK_IMAGE_ASPECT_COLOR_BIT));
      views.push_back(fb.colour.back().view);
    }
    if (key.depth) {
      fb.depth = make_image(VK_FORMAT_D32_SFLOAT, w, h, 1, samples,
                            VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                            VK_IMAGE_ASPECT_DEPTH_BIT);
      views.push_back(fb.depth.view);
    }
    VkFramebufferCreateInfo ci{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    ci.renderPass = rp;
    ci.attachmentCount = static_cast<uint32_t>(views.size());
    ci.pAttachments = views.data();
    ci.width = w;
    ci.height = h;
    ci.layers = 1;
    check(vkCreateFramebuffer(dev_, &ci, nullptr, &fb.fb), "vkCreateFramebuffer");
  } catch (...) {
    free_framebuffer(fb);
    framebuffers_.pop_front();
    throw;
  }
  return fb;
}

void VkGraphics::free_framebuffer(Framebuffer& fb) {
  if (fb.fb) vkDestroyFramebuffer(dev_, fb.fb, nullptr);
  fb.fb = VK_NULL_HANDLE;
  for (GfxImage& i : fb.colour) free_image(i);
  free_image(fb.depth);
  free_image(fb.resolved);
}

// --- textures, samplers, queries --------------------------------------------

// Level L of a texture of px pixels a side holds the noise frame of seed L
// (frame_texel), so every level differs from its neighbours.
Texture& VkGraphics::texture(uint32_t px) {
  if (auto it = textures_.find(px); it != textures_.end()) return it->second;
  const uint32_t most = std::min<uint32_t>(d_.p_->limits().maxImageDimension2D, 4096);
  if (px > most) throw OutOfResources(fmt::format("a texture of {} pixels a side (at most {} here)", px, most));
  if (textures_.size() >= 4) {
    for (auto& [k, t] : textures_) free_image(t.image);
    textures_.clear();
  }
  uint32_t levels = 1;
  while ((px >> levels) > 0) ++levels;
  Texture t;
  t.px = px;
  t.levels = levels;
  t.image = make_image(VK_FORMAT_R8G8B8A8_UNORM, px, px, levels, VK_SAMPLE_COUNT_1_BIT,
                       VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, VK_IMAGE_ASPECT_COLOR_BIT);
  try {
    d_.submit([&](VkCommandBuffer cb) {
      image_barrier(cb, t.image.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                    VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, levels);
    });
    for (uint32_t level = 0; level < levels; ++level) {
      const uint32_t side = std::max(px >> level, 1u);
      const FrameDesc noise{side, side, FramePattern::kNoise, 1, level, false};
      Memory& st = d_.staging(size_t{side} * side * 4);
      auto* out = static_cast<uint32_t*>(st.mapped);
      for (uint32_t y = 0; y < side; ++y)
        for (uint32_t x = 0; x < side; ++x) out[size_t{y} * side + x] = frame_texel(noise, x, y);
      d_.submit([&](VkCommandBuffer cb) {
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, level, 0, 1};
        region.imageExtent = {side, side, 1};
        vkCmdCopyBufferToImage(cb, st.buffer, t.image.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
      });
    }
    d_.submit([&](VkCommandBuffer cb) {
      image_barrier(cb, t.image.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                    VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, levels);
    });
  } catch (...) {
    free_image(t.image);
    throw;
  }
  return textures_.emplace(px, t).first->second;
}

VkSampler VkGraphics::sampler(TextureFilter f) {
  if (auto it = samplers_.find(f); it != samplers_.end()) return it->second;
  VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  const bool linear = f != TextureFilter::kPoint;
  si.magFilter = linear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
  si.minFilter = si.magFilter;
  si.mipmapMode = f == TextureFilter::kTrilinear || f == TextureFilter::kAniso ? VK_SAMPLER_MIPMAP_MODE_LINEAR
                                                                               : VK_SAMPLER_MIPMAP_MODE_NEAREST;
  si.addressModeU = VK_SAMPLER_ADDRESS_MODE_REPEAT;
  si.addressModeV = VK_SAMPLER_ADDRESS_MODE_REPEAT;
  si.addressModeW = VK_SAMPLER_ADDRESS_MODE_REPEAT;
  si.anisotropyEnable = f == TextureFilter::kAniso;
  si.maxAnisotropy = f == TextureFilter::kAniso ? limits_.max_anisotropy : 1.0f;
  si.maxLod = VK_LOD_CLAMP_NONE;
  VkSampler s = VK_NULL_HANDLE;
  check(vkCreateSampler(dev_, &si, nullptr, &s), "vkCreateSampler (graphics)");
  samplers_.emplace(f, s);
  return s;
}

VkQueryPool VkGraphics::stats_pool(uint32_t n) {
  if (n > stats_count_) {
    if (stats_) vkDestroyQueryPool(dev_, stats_, nullptr);
    stats_ = VK_NULL_HANDLE;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS;
    qi.queryCount = std::max<uint32_t>(n, 64);
    qi.pipelineStatistics = VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT;
    check(vkCreateQueryPool(dev_, &qi, nullptr, &stats_), "vkCreateQueryPool (pipeline statistics)");
    stats_count_ = qi.queryCount;
  }
  return stats_;
}

}  // namespace gpuscope::vulkan
