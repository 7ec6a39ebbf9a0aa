// A Device whose only working part is a small, exact GraphicsFacet: what
// the graphics probes' unit tests run against. Its rasteriser shades
// tile_px x tile_px tiles (halved, height first, until the tile's pixels x
// bytes per pixel fit tile_memory_bytes) in row-major order (scan lines
// inside a tile), one at a time, each tile every rectangle before the next (binning); fills run
// at fixed rates; rendered frames whose blocks are at least compress_px
// read 3x as fast; identical redraws write in half the time. Everything
// else throws Unsupported.
#pragma once

#include "backends/backend.hpp"
#include "backends/graphics.hpp"
#include "core/error.hpp"

#include <cstring>

namespace gpuscope::test {

class FakeGraphics : public GraphicsFacet {
 public:
  uint32_t tile_px = 64;
  size_t tile_memory_bytes = 65536;
  double gpixels = 10;  // per pass ns: pixels x rects / (gpixels) ns
  double gtexels = 40;
  uint32_t compress_px = 16;
  double read_gbps = 100;
  bool side_effects = true;

  GraphicsLimits graphics_limits() const override {
    GraphicsLimits l;
    l.max_width = l.max_height = 4096;
    l.max_colour_attachments = 8;
    l.colour_formats = {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f};
    l.sample_counts = {1, 4};
    l.depth = true;
    l.fragment_side_effects = side_effects;
    l.pipeline_statistics = true;
    l.max_anisotropy = 16;
    return l;
  }

  RasterTrace trace_raster(const PassDesc& pass, uint32_t stride) override {
    if (!side_effects) throw Unsupported("no fragment side effects");
    RasterTrace t;
    t.stride = stride;
    t.cells_x = (pass.width + stride - 1) / stride;
    t.cells_y = (pass.height + stride - 1) / stride;
    t.ticket.assign(size_t{t.cells_x} * t.cells_y * pass.rects, RasterTrace::kNoTicket);
    uint32_t tw = tile_px, th = tile_px;
    while (size_t{tw} * th * pass.bytes_per_pixel() > tile_memory_bytes && tw > 1) (th >= tw ? th : tw) /= 2;
    for (uint32_t ty = 0; ty < pass.height; ty += th)
      for (uint32_t tx = 0; tx < pass.width; tx += tw)
        for (uint32_t r = 0; r < pass.rects; ++r)
          for (uint32_t y = ty; y < std::min(pass.height, ty + th); ++y)
            for (uint32_t x = tx; x < std::min(pass.width, tx + tw); ++x) {
              if (x % stride == 0 && y % stride == 0)
                t.ticket[(size_t{r} * t.cells_y + y / stride) * t.cells_x + x / stride] =
                    static_cast<uint32_t>(t.tickets);
              ++t.tickets;
            }
    t.timing.ns = static_cast<double>(t.tickets);
    t.timing.fragments = t.tickets;
    return t;
  }

  FillResult fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) override {
    FillResult out;
    const double fragments = static_cast<double>(pass.width) * pass.height * pass.rects;
    for (int i = 0; i < passes; ++i) {
      const double ns =
          shading.textured ? fragments * shading.texture_samples / gtexels : fragments / gpixels;
      out.passes.push_back({ns * (1 + 0.001 * i), static_cast<uint64_t>(fragments)});
    }
    if (!read_back) return out;
    const PixelFormat f = pass.colour.empty() ? PixelFormat::kDepth32f : pass.colour.front();
    std::array<float, 4> c{};
    for (uint32_t r = pass.blend ? 0 : pass.rects - 1; r < pass.rects; ++r)
      for (int k = 0; k < 4; ++k) c[k] += flat_colour(r)[k];
    const size_t bytes = pixel_bytes(f);
    std::vector<unsigned char> px(bytes, 0);
    for (int k = 0; k < 4; ++k) {
      if (f == PixelFormat::kRgba8) px[k] = static_cast<unsigned char>(std::lround(c[k] * 255));
      if (f == PixelFormat::kRgba32f) std::memcpy(px.data() + 4 * k, &c[k], 4);
      if (f == PixelFormat::kRgba16f) {
        // Values here are multiples of 1/255 below 1: exponent and 10-bit mantissa.
        int e = 0;
        const float m = std::frexp(c[k], &e);  // c = m * 2^e, m in [0.5, 1)
        const uint16_t h =
            c[k] == 0
                ? 0
                : static_cast<uint16_t>(((e - 1 + 15) << 10) |
                                        (static_cast<uint16_t>(std::lround((m * 2 - 1) * 1024)) & 0x3FF));
        std::memcpy(px.data() + 2 * k, &h, 2);
      }
    }
    if (f == PixelFormat::kDepth32f) {
      const float d = 0.5f;
      std::memcpy(px.data(), &d, 4);
    }
    out.pixels.resize(size_t{pass.width} * pass.height * bytes);
    for (size_t p = 0; p < size_t{pass.width} * pass.height; ++p)
      std::memcpy(out.pixels.data() + p * bytes, px.data(), bytes);
    return out;
  }

  FrameTiming frame(const FrameDesc& f) override {
    FrameTiming t;
    const double bytes = static_cast<double>(f.width) * f.height * 4;
    const bool compressed =
        !f.storage_write && (f.pattern == FramePattern::kFlat ||
                             (f.pattern == FramePattern::kBlocks && f.block_px >= compress_px));
    t.read_ns = bytes / read_gbps / (compressed ? 3 : 1);
    const bool same = last_seed_ == f.seed && last_pattern_ == f.pattern && !f.storage_write;
    t.write_ns = bytes / read_gbps * (same ? 0.5 : 1);
    last_seed_ = f.seed;
    last_pattern_ = f.pattern;
    t.checksum = frame_checksum(f);
    return t;
  }

 private:
  uint32_t last_seed_ = ~0u;
  FramePattern last_pattern_ = FramePattern::kFlat;
};

class FakeGraphicsDevice : public Device {
 public:
  FakeGraphicsDevice() {
    info_.name = "fake graphics";
    info_.type = "cpu";  // the probes' small sizes: the fake computes every frame's checksum
    info_.compute_units = 4;
    info_.clock_mhz = 1000;
  }
  FakeGraphics facet;
  bool has_graphics = true;

  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<Buffer> create_buffer(size_t) override { throw Unsupported("fake: no buffers"); }
  void write(Buffer&, size_t, std::span<const std::byte>) override { throw Unsupported("fake: no buffers"); }
  void read(const Buffer&, size_t, std::span<std::byte>) override { throw Unsupported("fake: no buffers"); }
  Kernel& kernel(const KernelSpec&) override { throw Unsupported("fake: no kernels"); }
  KernelResources kernel_resources(Kernel&) override { throw Unsupported("fake: no kernels"); }
  double launch(Kernel&, const LaunchShape&, std::span<const KernelArg>) override {
    throw Unsupported("fake: no kernels");
  }
  LaunchBatch launch_batch(Kernel&, const LaunchShape&, std::span<const KernelArg>, int) override {
    throw Unsupported("fake: no kernels");
  }
  GraphicsFacet* graphics() override { return has_graphics ? &facet : nullptr; }

 private:
  DeviceInfo info_;
};

}  // namespace gpuscope::test
