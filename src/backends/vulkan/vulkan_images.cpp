// The ImageFacet of a Vulkan device: the images the texture family reads
// with texelFetch (src/kernels/vulkan/texture.comp). A kBuffer1D image is a
// VkBufferView of its backing buffer, bound as a uniform texel buffer, so it
// sees what kernels and writes put into that buffer; a k2D image is a VkImage
// of optimal tiling (the driver's layout), written by buffer-to-image copies
// and bound as a combined image sampler.
#include "backends/vulkan/vulkan_device.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {
namespace {

const char* kind_name(ImageKind k) { return k == ImageKind::kBuffer1D ? "1D buffer image" : "2D image"; }
const char* format_name(ImageFormat f) {
  return f == ImageFormat::kRgba32Float ? "R32G32B32A32_SFLOAT" : "R32G32B32A32_UINT";
}

}  // namespace

VkImg::~VkImg() { dev_.free_image(*this); }

void VkDev::free_image(VkImg& img) {
  if (lost()) {  // a running command may still use it (~VkDev)
    img.texel_view = VK_NULL_HANDLE;
    img.view = VK_NULL_HANDLE;
    img.image = VK_NULL_HANDLE;
    img.memory = VK_NULL_HANDLE;
    return;
  }
  if (img.texel_view) vkDestroyBufferView(dev_, img.texel_view, nullptr);
  if (img.view) vkDestroyImageView(dev_, img.view, nullptr);
  if (img.image) vkDestroyImage(dev_, img.image, nullptr);
  if (img.memory) vkFreeMemory(dev_, img.memory, nullptr);
  img.texel_view = VK_NULL_HANDLE;
  img.view = VK_NULL_HANDLE;
  img.image = VK_NULL_HANDLE;
  img.memory = VK_NULL_HANDLE;
}

VkSampler VkDev::sampler() {
  if (sampler_) return sampler_;
  // texelFetch reads through no sampler state; a combined image sampler
  // still needs one, and nearest filtering is the one integer formats allow.
  VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  si.magFilter = VK_FILTER_NEAREST;
  si.minFilter = VK_FILTER_NEAREST;
  si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  si.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.maxLod = 0;
  check(vkCreateSampler(dev_, &si, nullptr, &sampler_), "vkCreateSampler");
  return sampler_;
}

void VkDev::transition(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.srcAccessMask =
      from == VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_SHADER_READ_BIT;
  b.dstAccessMask =
      to == VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_SHADER_READ_BIT;
  if (from == VK_IMAGE_LAYOUT_UNDEFINED) b.srcAccessMask = 0;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  const auto stage = [](VkImageLayout l) {
    if (l == VK_IMAGE_LAYOUT_UNDEFINED) return VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
    return l == VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL ? VK_PIPELINE_STAGE_TRANSFER_BIT
                                                     : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  };
  vkCmdPipelineBarrier(cb, stage(from), stage(to), 0, 0, nullptr, 0, nullptr, 1, &b);
}

std::unique_ptr<Image> VkDev::create_image(const ImageDesc& desc, Buffer* backing) {
  const auto f = static_cast<size_t>(desc.format);
  const bool one_d = desc.kind == ImageKind::kBuffer1D;
  if (one_d ? !p_->images.texel_buffer[f] : !p_->images.sampled_2d[f])
    throw Unsupported(fmt::format("{} has no {} of {} ({})", info_.id, kind_name(desc.kind),
                                  format_name(desc.format),
                                  one_d ? "uniform texel buffers" : "sampled optimal-tiling images"));
  if (desc.width == 0 || desc.height == 0 || (one_d && desc.height != 1))
    throw DeviceError(fmt::format("a {} of {}x{} pixels", kind_name(desc.kind), desc.width, desc.height));
  auto img = std::make_unique<VkImg>(*this, desc);

  if (one_d) {
    if (!backing || backing->size_bytes() < desc.size_bytes())
      throw DeviceError("a 1D buffer image needs a backing buffer of at least its size");
    if (desc.width > p_->limits().maxTexelBufferElements)
      throw OutOfResources(fmt::format("a 1D buffer image of {} pixels exceeds the device's {}", desc.width,
                                       p_->limits().maxTexelBufferElements));
    VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = as_vk(*backing).mem.buffer;
    vi.format = vk_format(desc.format);
    vi.offset = 0;
    vi.range = desc.size_bytes();
    check(vkCreateBufferView(dev_, &vi, nullptr, &img->texel_view), "vkCreateBufferView");
    return img;
  }

  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = VK_IMAGE_TYPE_2D;
  ci.format = vk_format(desc.format);
  ci.extent = {static_cast<uint32_t>(std::min<size_t>(desc.width, UINT32_MAX)),
               static_cast<uint32_t>(std::min<size_t>(desc.height, UINT32_MAX)), 1};
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = VK_SAMPLE_COUNT_1_BIT;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImageFormatProperties ip{};
  const VkResult supported =
      vkGetPhysicalDeviceImageFormatProperties(p_->pd, ci.format, ci.imageType, ci.tiling, ci.usage, 0, &ip);
  if (supported != VK_SUCCESS || desc.width > ip.maxExtent.width || desc.height > ip.maxExtent.height ||
      desc.size_bytes() > ip.maxResourceSize)
    throw OutOfResources(
        fmt::format("a 2D image of {}x{} pixels exceeds the device's {}x{} ({} bytes at most)", desc.width,
                    desc.height, ip.maxExtent.width, ip.maxExtent.height, ip.maxResourceSize));
  check(vkCreateImage(dev_, &ci, nullptr, &img->image), "vkCreateImage");
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(dev_, img->image, &req);
  std::optional<uint32_t> type;
  for (uint32_t i = 0; i < p_->mem.memoryTypeCount && !type; ++i)
    if ((req.memoryTypeBits & (1u << i)) &&
        (p_->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = i;
  for (uint32_t i = 0; i < p_->mem.memoryTypeCount && !type; ++i)
    if (req.memoryTypeBits & (1u << i)) type = i;
  if (!type) throw OutOfResources("no memory type for a 2D image");
  VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mi.allocationSize = req.size;
  mi.memoryTypeIndex = *type;
  if (const VkResult r = vkAllocateMemory(dev_, &mi, nullptr, &img->memory); r != VK_SUCCESS)
    throw OutOfResources(fmt::format("allocating {} bytes for a 2D image: {}", req.size, result_name(r)));
  check(vkBindImageMemory(dev_, img->image, img->memory, 0), "vkBindImageMemory");
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = img->image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = ci.format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  check(vkCreateImageView(dev_, &vi, nullptr, &img->view), "vkCreateImageView");
  // Zeroed, and in the layout shaders read it in from here on.
  submit([&](VkCommandBuffer cb) {
    transition(cb, img->image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    const VkClearColorValue zero{};
    const VkImageSubresourceRange all{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdClearColorImage(cb, img->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &zero, 1, &all);
    transition(cb, img->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
               VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  });
  return img;
}

// Through the staging buffer, as many whole rows a copy as it holds.
void VkDev::write_image(Image& dst, std::span<const std::byte> pixels) {
  auto& img = static_cast<VkImg&>(dst);
  const ImageDesc& d = img.desc();
  check_image_write(d, pixels.size());
  const size_t row_bytes = d.width * ImageDesc::kPixelBytes;
  Memory& st = staging(pixels.size());
  if (row_bytes > st.bytes)
    throw OutOfResources(fmt::format("write_image: a row of {} bytes exceeds the {}-byte staging buffer",
                                     row_bytes, st.bytes));
  const size_t rows_per_copy = st.bytes / row_bytes;
  for (size_t row = 0; row < d.height; row += rows_per_copy) {
    const size_t rows = std::min(rows_per_copy, d.height - row);
    std::memcpy(st.mapped, pixels.data() + row * row_bytes, rows * row_bytes);
    submit([&](VkCommandBuffer cb) {
      transition(cb, img.image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
      VkBufferImageCopy region{};
      region.bufferOffset = 0;
      region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      region.imageOffset = {0, static_cast<int32_t>(row), 0};
      region.imageExtent = {static_cast<uint32_t>(d.width), static_cast<uint32_t>(rows), 1};
      vkCmdCopyBufferToImage(cb, st.buffer, img.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
      transition(cb, img.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                 VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    });
  }
}

}  // namespace gpuscope::vulkan
