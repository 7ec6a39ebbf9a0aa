// What a Vulkan device's graphics pipeline can do, read once from the
// physical device (GraphicsSupport): the GraphicsLimits the facet reports,
// or why it offers none, and the line DeviceInfo::vendor_info["vk_graphics"] shows.
#include "backends/vulkan/vulkan_graphics.hpp"

#include "backends/vulkan/vulkan_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace gpuscope::vulkan
