#include "backends/graphics.hpp"

namespace gpuscope {

std::string_view format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::kRgba8: return "rgba8";
    case PixelFormat::kRgba16f: return "rgba16f";
    case PixelFormat::kRgba32f: return "rgba32f";
    case PixelFormat::kDepth32f: return "depth32f";
  }
  return "?";
}

std::string_view filter_name(TextureFilter f) {
  switch (f) {
    case TextureFilter::kPoint: return "point";
    case TextureFilter::kBilinear: return "bilinear";
    case TextureFilter::kTrilinear: return "trilinear";
    case TextureFilter::kAniso: return "aniso";
  }
  return "?";
}

std::array<float, 4> flat_colour(uint32_t rect) {
  constexpr float kStep = 1.0f / 255.0f;
  return {kStep, static_cast<float>(rect & 1u) * kStep, static_cast<float>((rect >> 1) & 1u) * kStep, kStep};
}

// A 32-bit mix of (seed, cx, cy); shaders compute the same with uint
// arithmetic (wrapping multiplies, logical shifts).
static uint32_t mix(uint32_t seed, uint32_t cx, uint32_t cy) {
  uint32_t h = seed * 0x9E3779B1u ^ cx * 0x85EBCA77u ^ cy * 0xC2B2AE3Du;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}

uint32_t frame_texel(const FrameDesc& f, uint32_t x, uint32_t y) {
  uint32_t cx = 0, cy = 0;
  switch (f.pattern) {
    case FramePattern::kFlat: break;
    case FramePattern::kBlocks: cx = x / (f.block_px ? f.block_px : 1); cy = y / (f.block_px ? f.block_px : 1); break;
    case FramePattern::kNoise: cx = x; cy = y; break;
  }
  return mix(f.seed, cx, cy) | 0xFF000000u;  // alpha 255: opaque
}

uint64_t frame_checksum(const FrameDesc& f) {
  uint64_t sum = 0;
  for (uint32_t y = 0; y < f.height; ++y)
    for (uint32_t x = 0; x < f.width; ++x) {
      uint32_t t = frame_texel(f, x, y);
      sum += (t & 0xFFu) + ((t >> 8) & 0xFFu) + ((t >> 16) & 0xFFu) + (t >> 24);
    }
  return sum;
}

}  // namespace gpuscope
