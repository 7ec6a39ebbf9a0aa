// Internal to the Vulkan backend: the GraphicsFacet (backends/graphics.hpp)
// of a VkDev, on the device's one queue, which then has GRAPHICS and COMPUTE
// (vulkan_physical.cpp picks such a family first). Classic render passes
// (VkRenderPass), the common denominator down to phones' drivers.
//   vulkan_graphics_support.cpp    what the device can do (GraphicsSupport)
//   vulkan_graphics.cpp            checks, timed passes, trace_raster, fill, read-back
//   vulkan_graphics_frames.cpp     frame(), and the frames' images, render pass, sampler
//   vulkan_graphics_objects.cpp    images, render passes, framebuffers, textures, samplers
//   vulkan_graphics_pipelines.cpp  shader modules, layouts, pipelines
// Every object is cached by what distinguishes it, so repeated passes create
// nothing; the shaders and their contract are in src/kernels/vulkan/graphics
// and src/kernels/vulkan/README.md.
#pragma once

#include <volk.h>  // before any other Vulkan header

#include "backends/backend.hpp"
#include "backends/graphics.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace gpuscope::vulkan {

struct Physical;
class VkDev;

// What the device offers, read once from the physical device: the limits,
// or (limits.any() false) why there is no graphics facet.
struct GraphicsSupport {
  GraphicsLimits limits;
  std::string why_not;  // empty where offered
  std::string summary;  // DeviceInfo::vendor_info["vk_graphics"]
  bool textures = false;        // R8G8B8A8_UNORM sampled with linear filtering (Shading::textured)
  bool storage_frames = false;  // R8G8B8A8_UNORM storage images (FrameDesc::storage_write)
};
GraphicsSupport read_graphics_support(const Physical& p, bool graphics_queue);

VkFormat vk_pixel_format(PixelFormat f);

// An image the facet owns: memory of its own, one view.
struct GfxImage {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
};

// The attachments of a fill or trace pass, and the multisample count.
struct PassKey {
  std::vector<PixelFormat> colour;
  bool depth = false;
  uint32_t samples = 1;
  auto operator<=>(const PassKey&) const = default;
};

struct Framebuffer {
  PassKey key;
  uint32_t width = 0, height = 0;
  std::vector<GfxImage> colour;  // by attachment
  GfxImage depth;                // where key.depth
  GfxImage resolved;             // single-sample copy of colour 0 for read-back under MSAA; made on first use
  VkFramebuffer fb = VK_NULL_HANDLE;
};

// A shader program's layouts: one descriptor set (possibly empty) and a
// 128-byte push-constant range.
struct Program {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;  // allocated once, rewritten before each use
};

// What a fragment shader variant computes (rect.frag's SHADING_*).
enum class FragKind { kFlat, kTrace, kTextured, kFrame };

struct Texture {
  GfxImage image;
  uint32_t px = 0, levels = 0;
};

// A frame's image, shared by the frames of one size and kind.
struct FrameImage {
  GfxImage image;
  VkFramebuffer fb = VK_NULL_HANDLE;  // rendered frames
};

// The stages the graphics programs' push-constant range is declared for.
constexpr VkShaderStageFlags kGraphicsStages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;

class VkGraphics final : public GraphicsFacet {
 public:
  VkGraphics(VkDev& dev, const GraphicsSupport& support);
  ~VkGraphics() override;
  VkGraphics(const VkGraphics&) = delete;
  VkGraphics& operator=(const VkGraphics&) = delete;

  GraphicsLimits graphics_limits() const override { return limits_; }
  RasterTrace trace_raster(const PassDesc& pass, uint32_t stride) override;
  FillResult fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) override;
  FrameTiming frame(const FrameDesc& f) override;

 private:
  // --- checks (vulkan_graphics.cpp) ---
  void check_pass(const PassDesc& pass) const;

  // Records `passes` timed passes of `fb` with `pipe`, each between a
  // timestamp before its begin and one after its end (and inside a
  // statistics query where the device counts fragments), after `prepare`
  // (descriptors, push constants, resets); submits and waits; each pass's
  // timing.
  std::vector<PassTiming> run_passes(Framebuffer& fb, VkPipeline pipe, uint32_t rects, int passes,
                                     const std::function<void(VkCommandBuffer)>& prepare);
  std::vector<std::byte> read_attachment(Framebuffer& fb);

  // --- objects (vulkan_graphics_objects.cpp) ---
  GfxImage make_image(VkFormat format, uint32_t w, uint32_t h, uint32_t levels, VkSampleCountFlagBits samples,
                      VkImageUsageFlags usage, VkImageAspectFlags aspect);
  void free_image(GfxImage& img);
  VkRenderPass render_pass(const PassKey& key);
  VkRenderPass frame_pass();
  Framebuffer& framebuffer(const PassKey& key, uint32_t w, uint32_t h);
  void free_framebuffer(Framebuffer& fb);
  VkShaderModule module(const std::string& file, const std::string& defines, int stage);
  Program& program(FragKind kind);
  Program& compute_program(bool store);
  // `may_discard`: rect.frag's MAY_DISCARD variant (Shading::may_discard).
  VkPipeline pipeline(const PassKey& key, FragKind kind, bool blend, int tex_mode, bool may_discard = false);
  VkPipeline frame_pipeline();
  VkPipeline compute_pipeline(bool store);
  Texture& texture(uint32_t px);
  VkSampler sampler(TextureFilter f);
  VkSampler frame_sampler();
  // The image's layout from `from` to `to` for `levels` mip levels, after
  // everything before and before everything after (these are not timed).
  void image_barrier(VkCommandBuffer cb, VkImage image, VkImageAspectFlags aspect, VkImageLayout from,
                     VkImageLayout to, uint32_t levels);
  FrameImage& frame_image(uint32_t w, uint32_t h, bool storage);
  VkQueryPool stats_pool(uint32_t n);

  VkDev& d_;
  VkDevice dev_;
  GraphicsLimits limits_;
  bool textures_ok_ = false, storage_frames_ok_ = false;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::map<PassKey, VkRenderPass> passes_;
  VkRenderPass frame_pass_ = VK_NULL_HANDLE;
  // Most recently used first; at most kFramebuffers kept (their memory can
  // be large: 8 RGBA32F attachments at 8 samples of 1080p are 2 GiB).
  static constexpr size_t kFramebuffers = 3;
  std::list<Framebuffer> framebuffers_;
  std::map<std::string, VkShaderModule> modules_;
  std::map<FragKind, Program> programs_;
  std::array<Program, 2> compute_programs_{};  // read, store
  std::map<std::tuple<PassKey, FragKind, bool, int, bool>, VkPipeline> pipelines_;  // pipeline()'s arguments
  VkPipeline frame_pipeline_ = VK_NULL_HANDLE;
  std::array<VkPipeline, 2> compute_pipelines_{};  // read, store
  std::map<uint32_t, Texture> textures_;
  std::map<TextureFilter, VkSampler> samplers_;
  VkSampler frame_sampler_ = VK_NULL_HANDLE;
  static constexpr size_t kFrames = 8;
  std::map<std::tuple<uint32_t, uint32_t, bool>, FrameImage> frames_;
  VkQueryPool stats_ = VK_NULL_HANDLE;
  uint32_t stats_count_ = 0;
  std::unique_ptr<Buffer> counter_, field_, sum_;  // trace's counter and field, the frame read's sum
};

}  // namespace gpuscope::vulkan
