// The Vulkan backend's GraphicsFacet on whatever Vulkan device the machine
// has (lavapipe in CI): the raster trace holds every fragment once, fills
// write the flat colours (summed under blending) into every format, textured
// fills sample what the texture holds, frames read back their checksum,
// rendered or stored, and bad passes are refused with Unsupported or
// OutOfResources; the validation layer stays silent throughout.
#include "backends/backend.hpp"
#include "backends/graphics.hpp"
#include "core/error.hpp"
#include "support/vulkan_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <string>

namespace gpuscope {
namespace {

class VulkanGraphics : public test::VulkanDeviceTest {
 protected:
  void SetUp() override {
    VulkanDeviceTest::SetUp();
    if (IsSkipped()) return;
    g_ = dev().graphics();
    ASSERT_NE(g_, nullptr) << dev().info().vendor_info.value("vk_graphics", std::string("?"));
  }
  bool has(PixelFormat f) const {
    const auto l = g_->graphics_limits();
    return std::find(l.colour_formats.begin(), l.colour_formats.end(), f) != l.colour_formats.end();
  }
  GraphicsFacet* g_ = nullptr;
};

// IEEE half to float (normal and zero values suffice here).
float half(uint16_t h) {
  const uint32_t e = (h >> 10) & 31u, m = h & 1023u;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
                         : std::ldexp(1.0f + static_cast<float>(m) / 1024.0f, static_cast<int>(e) - 15);
  return (h & 0x8000u) ? -v : v;
}

// Pixel i's four channels as floats in [0, 1] (RGBA8 as n / 255).
std::array<float, 4> channels(const std::vector<std::byte>& px, PixelFormat f, size_t i) {
  std::array<float, 4> c{};
  const std::byte* p = px.data() + i * pixel_bytes(f);
  for (int k = 0; k < 4; ++k) {
    if (f == PixelFormat::kRgba8) c[k] = static_cast<float>(std::to_integer<uint8_t>(p[k])) / 255.0f;
    if (f == PixelFormat::kRgba16f) {
      uint16_t h;
      std::memcpy(&h, p + 2 * k, 2);
      c[k] = half(h);
    }
    if (f == PixelFormat::kRgba32f) std::memcpy(&c[k], p + 4 * k, 4);
  }
  return c;
}

// The fragment shader invocations a pass counted: at least one per covered
// pixel and rectangle; drivers may count helper invocations too (lavapipe
// shades whole 2x2 quads, those on the rectangle's diagonal once per
// triangle: 8688 counted for 6930 fragments of 70x33x3), so at most half
// again here, where the framebuffers are small and the diagonal long.
void expect_fragments(const PassTiming& t, uint64_t n, bool counted) {
  if (!counted) return;
  ASSERT_TRUE(t.fragments.has_value());
  EXPECT_GE(*t.fragments, n);
  EXPECT_LE(*t.fragments, n + n / 2);
}

TEST_F(VulkanGraphics, LimitsListRgba8OneSampleAndTheReason) {
  const GraphicsLimits l = g_->graphics_limits();
  EXPECT_TRUE(has(PixelFormat::kRgba8));
  EXPECT_EQ(l.sample_counts.at(0), 1u);
  EXPECT_GE(l.max_width, 4096u);
  EXPECT_GE(l.max_colour_attachments, 4u);
  const std::string summary = dev().info().vendor_info.value("vk_graphics", std::string());
  EXPECT_NE(summary.find("queue family"), std::string::npos) << summary;
  RecordProperty("vk_graphics", summary);  // what the device offers, in the test's XML output
}

// One rectangle over a framebuffer whose sides are not multiples of 64:
// every pixel took exactly one ticket.
TEST_F(VulkanGraphics, TraceOfOneRectIsAPermutationOfThePixels) {
  const GraphicsLimits l = g_->graphics_limits();
  if (!l.fragment_side_effects) GTEST_SKIP() << "no fragmentStoresAndAtomics";
  PassDesc pass;
  pass.width = 150;
  pass.height = 70;
  const uint32_t n = pass.width * pass.height;
  const RasterTrace t = g_->trace_raster(pass, 1);
  EXPECT_EQ(t.tickets, n);
  EXPECT_EQ(t.cells_x, 150u);
  EXPECT_EQ(t.cells_y, 70u);
  ASSERT_EQ(t.ticket.size(), n);
  std::vector<uint32_t> sorted = t.ticket;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  EXPECT_EQ(sorted, all);
  expect_fragments(t.timing, n, l.pipeline_statistics);
}

// Two rectangles with depth, every 3rd pixel recorded: each recorded
// (pixel, rectangle) holds its own ticket; a second trace starts afresh.
TEST_F(VulkanGraphics, StridedTraceOfTwoRectsRecordsEachSampledPixelOfEach) {
  if (!g_->graphics_limits().fragment_side_effects) GTEST_SKIP() << "no fragmentStoresAndAtomics";
  PassDesc pass;
  pass.width = 100;
  pass.height = 90;
  pass.rects = 2;
  pass.depth = true;
  const uint32_t n = pass.width * pass.height;
  for (int round = 0; round < 2; ++round) {
    const RasterTrace t = g_->trace_raster(pass, 3);
    EXPECT_EQ(t.tickets, 2u * n);
    EXPECT_EQ(t.stride, 3u);
    ASSERT_EQ(t.cells_x, 34u);
    ASSERT_EQ(t.cells_y, 30u);
    ASSERT_EQ(t.ticket.size(), 2u * 34 * 30);
    std::set<uint32_t> seen(t.ticket.begin(), t.ticket.end());
    EXPECT_EQ(seen.size(), t.ticket.size()) << "no ticket twice, none missing";
    EXPECT_LT(*seen.rbegin(), 2u * n);
  }
  EXPECT_THROW(g_->trace_raster(pass, 0), DeviceError);
}

TEST_F(VulkanGraphics, FillWritesTheLastRectsColourOrTheSumUnderBlending) {
  const uint32_t rects = 3;
  for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f}) {
    if (!has(f)) continue;
    for (bool blend : {false, true}) {
      PassDesc pass;
      pass.width = 70;
      pass.height = 33;
      pass.colour = {f, PixelFormat::kRgba8};
      pass.rects = rects;
      pass.blend = blend;
      const FillResult r = g_->fill(pass, Shading{}, 3, true);
      ASSERT_EQ(r.passes.size(), 3u);
      for (const PassTiming& p : r.passes) {
        EXPECT_GT(p.ns, 0);
        expect_fragments(p, uint64_t{pass.width} * pass.height * rects, g_->graphics_limits().pipeline_statistics);
      }
      std::array<float, 4> want{};
      for (uint32_t i = blend ? 0 : rects - 1; i < rects; ++i)
        for (int k = 0; k < 4; ++k) want[k] += flat_colour(i)[k];
      ASSERT_EQ(r.pixels.size(), size_t{pass.width} * pass.height * pixel_bytes(f));
      const float tol = f == PixelFormat::kRgba8 ? 0.5f / 255 : 1e-3f;
      for (size_t i = 0; i < size_t{pass.width} * pass.height; ++i) {
        const auto c = channels(r.pixels, f, i);
        for (int k = 0; k < 4; ++k)
          ASSERT_NEAR(c[k], want[k], tol) << format_name(f) << (blend ? " blend" : "") << " pixel " << i;
      }
    }
  }
}

// rect.frag's MAY_DISCARD variant (Shading::may_discard) discards nothing:
// an opaque flat pass writes the last rectangle's colour, a blended one the
// sum, a depth-only one the last depth, a textured one what the texture
// without it gives, and every fragment of every rectangle is counted. Each
// shares its render pass with the variant without, so the pipelines (and
// their push constants) must not be mixed up between the two.
TEST_F(VulkanGraphics, MayDiscardFillsDrawEveryFragmentUnchanged) {
  const bool counted = g_->graphics_limits().pipeline_statistics;
  Shading discard;
  discard.may_discard = true;
  for (bool blend : {false, true}) {
    PassDesc pass;
    pass.width = 70;
    pass.height = 33;
    pass.rects = 5;
    pass.blend = blend;
    for (const Shading& sh : {Shading{}, discard, Shading{}}) {
      const FillResult r = g_->fill(pass, sh, 2, true);
      ASSERT_EQ(r.passes.size(), 2u);
      for (const PassTiming& p : r.passes) expect_fragments(p, uint64_t{70} * 33 * 5, counted);
      // flat_colour(4), or flat_colour(0..4) summed: (5, 2, 2, 5) / 255
      const std::array<int, 4> want = blend ? std::array{5, 2, 2, 5} : std::array{1, 0, 0, 1};
      ASSERT_EQ(r.pixels.size(), size_t{70} * 33 * 4);
      for (size_t i = 0; i < size_t{70} * 33; ++i)
        for (int k = 0; k < 4; ++k)
          ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i + k]), want[k])
              << (sh.may_discard ? "may_discard" : "plain") << (blend ? " blend" : "") << " pixel " << i;
    }
  }
  PassDesc depth;
  depth.width = 64;
  depth.height = 20;
  depth.colour.clear();
  depth.depth = true;
  depth.rects = 7;
  const FillResult d = g_->fill(depth, discard, 2, true);
  for (const PassTiming& p : d.passes) expect_fragments(p, uint64_t{64} * 20 * 7, counted);
  ASSERT_EQ(d.pixels.size(), size_t{64} * 20 * 4);
  for (size_t i = 0; i < 64 * 20; ++i) {
    float z;
    std::memcpy(&z, d.pixels.data() + 4 * i, 4);
    ASSERT_EQ(z, 7.0f / 256.0f) << "pixel " << i;
  }
  Shading tex;
  tex.textured = true;
  tex.filter = TextureFilter::kBilinear;
  tex.texture_px = 32;
  tex.texture_samples = 3;
  PassDesc tp;
  tp.width = 48;
  tp.height = 40;
  tp.rects = 2;
  const FillResult plain = g_->fill(tp, tex, 1, true);
  tex.may_discard = true;
  const FillResult t = g_->fill(tp, tex, 2, true);
  for (const PassTiming& p : t.passes) expect_fragments(p, uint64_t{48} * 40 * 2, counted);
  EXPECT_EQ(t.pixels, plain.pixels);
}

// A depth-only pass keeps the last rectangle's depth, (i & 255) + 1 over
// 256 (rect.vert); with MSAA the colour read back is the pixel's colour.
TEST_F(VulkanGraphics, DepthOnlyAndMultisampledFillsReadBack) {
  const GraphicsLimits l = g_->graphics_limits();
  ASSERT_TRUE(l.depth);
  PassDesc depth;
  depth.width = 64;
  depth.height = 20;
  depth.colour.clear();
  depth.depth = true;
  depth.rects = 5;
  const FillResult d = g_->fill(depth, Shading{}, 2, true);
  ASSERT_EQ(d.pixels.size(), size_t{64} * 20 * 4);
  for (size_t i = 0; i < 64 * 20; ++i) {
    float z;
    std::memcpy(&z, d.pixels.data() + 4 * i, 4);
    ASSERT_EQ(z, 5.0f / 256.0f) << "pixel " << i;
  }
  for (uint32_t s : l.sample_counts) {
    if (s == 1) continue;
    PassDesc ms;
    ms.width = 40;
    ms.height = 30;
    ms.depth = true;
    ms.samples = s;
    ms.rects = 2;
    ms.blend = true;
    const FillResult r = g_->fill(ms, Shading{}, 1, true);
    ASSERT_EQ(r.pixels.size(), size_t{40} * 30 * 4);
    for (size_t i = 0; i < 40 * 30; ++i) {
      // flat_colour(0) + flat_colour(1): (2, 1, 0, 2) / 255
      ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i]), 2) << s << " samples, pixel " << i;
      ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i + 1]), 1);
      ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i + 2]), 0);
      ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i + 3]), 2);
    }
    expect_fragments(r.passes[0], 40u * 30 * 2, l.pipeline_statistics);
  }
}

// The tile-memory probe's heaviest kind of pass: several attachments of
// mixed formats, depth and the largest sample count, blended.
TEST_F(VulkanGraphics, ManyAttachmentsAtTheMostSamplesFillAndReadBack) {
  const GraphicsLimits l = g_->graphics_limits();
  PassDesc pass;
  pass.width = 96;
  pass.height = 64;
  pass.colour.clear();
  for (uint32_t i = 0; i < std::min<uint32_t>(l.max_colour_attachments, 4); ++i)
    pass.colour.push_back(l.colour_formats[i % l.colour_formats.size()]);
  pass.depth = l.depth;
  pass.samples = l.sample_counts.back();
  pass.rects = 4;
  pass.blend = true;
  const FillResult r = g_->fill(pass, Shading{}, 2, true);
  ASSERT_EQ(r.passes.size(), 2u);
  ASSERT_EQ(r.pixels.size(), size_t{96} * 64 * 4);
  for (size_t i = 0; i < 96 * 64; ++i)  // flat_colour(0..3) summed: (4, 2, 2, 4) / 255
    ASSERT_EQ(std::to_integer<int>(r.pixels[4 * i]) + std::to_integer<int>(r.pixels[4 * i + 1]) * 10 +
                  std::to_integer<int>(r.pixels[4 * i + 2]) * 100 + std::to_integer<int>(r.pixels[4 * i + 3]) * 1000,
              4224)
        << "pixel " << i;
}

// The texture's level 0 is the noise frame of seed 0 (README): point
// sampling returns its texels exactly, bilinear the mean of a 2x2 quad (to
// the filter's rounding), the others something in the texels' range.
TEST_F(VulkanGraphics, TexturedFillSamplesTheTexture) {
  const uint32_t px = 32;
  const FrameDesc level0{px, px, FramePattern::kNoise, 1, 0, false};
  auto byte = [](uint32_t t, int k) { return static_cast<int>((t >> (8 * k)) & 0xFFu); };
  PassDesc pass;
  pass.width = 48;
  pass.height = 40;
  for (TextureFilter filter :
       {TextureFilter::kPoint, TextureFilter::kBilinear, TextureFilter::kTrilinear, TextureFilter::kAniso}) {
    Shading sh;
    sh.textured = true;
    sh.filter = filter;
    sh.texture_px = px;
    sh.texture_samples = 1;
    if (filter == TextureFilter::kAniso && g_->graphics_limits().max_anisotropy == 0) {
      EXPECT_THROW(g_->fill(pass, sh, 1, true), Unsupported);
      continue;
    }
    const FillResult r = g_->fill(pass, sh, 2, true);
    ASSERT_EQ(r.pixels.size(), size_t{48} * 40 * 4);
    int off_by_more = 0;
    for (uint32_t y = 0; y < pass.height; ++y)
      for (uint32_t x = 0; x < pass.width; ++x) {
        const std::byte* p = r.pixels.data() + 4 * (y * pass.width + x);
        ASSERT_EQ(std::to_integer<int>(p[3]), 255) << filter_name(filter);  // every texel is opaque
        for (int k = 0; k < 3; ++k) {
          const int got = std::to_integer<int>(p[k]);
          if (filter == TextureFilter::kPoint) {
            ASSERT_EQ(got, byte(frame_texel(level0, x % px, y % px), k)) << x << "," << y;
          } else if (filter == TextureFilter::kBilinear) {
            int sum = 0;
            for (uint32_t dy = 0; dy < 2; ++dy)
              for (uint32_t dx = 0; dx < 2; ++dx) sum += byte(frame_texel(level0, (x + dx) % px, (y + dy) % px), k);
            if (std::abs(got - sum / 4.0) > 1.5) ++off_by_more;
          }
        }
      }
    EXPECT_EQ(off_by_more, 0) << filter_name(filter);
    // Not all one value: the texture's noise came through.
    std::set<int> reds;
    for (size_t i = 0; i < r.pixels.size(); i += 4) reds.insert(std::to_integer<int>(r.pixels[i]));
    EXPECT_GT(reds.size(), 20u) << filter_name(filter);
  }
}

TEST_F(VulkanGraphics, FrameChecksumsMatchTheHostsRenderedAndStored) {
  for (bool storage : {false, true}) {
    for (FramePattern pattern : {FramePattern::kFlat, FramePattern::kBlocks, FramePattern::kNoise}) {
      FrameDesc f{200, 120, pattern, 8, 7, storage};
      const FrameTiming t = g_->frame(f);
      EXPECT_EQ(t.checksum, frame_checksum(f)) << (storage ? "stored " : "rendered ") << static_cast<int>(pattern);
      EXPECT_GT(t.write_ns, 0);
      EXPECT_GT(t.read_ns, 0);
      f.seed = 8;  // the same image, redrawn with other content
      EXPECT_EQ(g_->frame(f).checksum, frame_checksum(f));
    }
  }
}

// More frame sizes than the facet keeps images for: the older ones are
// dropped and remade, every checksum still right.
TEST_F(VulkanGraphics, ManyFrameSizesKeepTheirChecksums) {
  for (uint32_t i = 0; i < 12; ++i) {
    const FrameDesc f{17 + 5 * i, 9 + i, FramePattern::kNoise, 1, i, i % 2 == 1};
    EXPECT_EQ(g_->frame(f).checksum, frame_checksum(f)) << i;
  }
}

TEST_F(VulkanGraphics, BadPassesAreRefusedNotCrashed) {
  const GraphicsLimits l = g_->graphics_limits();
  PassDesc pass;
  pass.width = 64;
  pass.height = 64;
  pass.samples = 3;
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), Unsupported);
  EXPECT_THROW(g_->trace_raster(pass, 10), Unsupported);
  pass.samples = 1;
  pass.width = l.max_width + 1;
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), OutOfResources);
  pass.width = 0;
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), Unsupported);
  pass.width = 64;
  pass.colour.clear();
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), Unsupported);  // no attachment at all
  pass.colour.assign(l.max_colour_attachments + 1, PixelFormat::kRgba8);
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), Unsupported);
  pass.colour = {PixelFormat::kDepth32f};
  EXPECT_THROW(g_->fill(pass, Shading{}, 1, false), Unsupported);
  pass.colour = {PixelFormat::kRgba8};
  Shading sh;
  sh.textured = true;
  sh.texture_px = 0;
  EXPECT_THROW(g_->fill(pass, sh, 1, false), Unsupported);
  EXPECT_THROW(g_->frame(FrameDesc{l.max_width + 1, 16, FramePattern::kFlat, 1, 0, false}), OutOfResources);
  // Still usable afterwards.
  EXPECT_EQ(g_->fill(pass, Shading{}, 2, false).passes.size(), 2u);
}

// Many passes reuse one framebuffer and pipeline: twenty 1080p passes, as
// the probes' fill-rate series draw them, in one submission.
TEST_F(VulkanGraphics, TwentyFullHdPassesAreTwentyTimings) {
  PassDesc pass;
  pass.width = 1920;
  pass.height = 1080;
  const FillResult r = g_->fill(pass, Shading{}, 20, false);
  ASSERT_EQ(r.passes.size(), 20u);
  for (const PassTiming& p : r.passes) EXPECT_GT(p.ns, 0);
  EXPECT_TRUE(r.pixels.empty());
}

}  // namespace
}  // namespace gpuscope
