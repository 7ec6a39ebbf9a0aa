#include "backends/sim/raster_model.hpp"

#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace gpuscope::sim {
namespace {

size_t idx(PixelFormat f) { return static_cast<size_t>(f); }
size_t idx(TextureFilter f) { return static_cast<size_t>(f); }

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// Every bit of x's low 16 to the even positions (Morton decoding's inverse
// is compact below).
uint32_t compact_even_bits(uint32_t v) {
  v &= 0x55555555u;
  v = (v | (v >> 1)) & 0x33333333u;
  v = (v | (v >> 2)) & 0x0F0F0F0Fu;
  v = (v | (v >> 4)) & 0x00FF00FFu;
  v = (v | (v >> 8)) & 0x0000FFFFu;
  return v;
}

// Position d along the Hilbert curve over an n x n grid (n a power of two):
// the usual quadrant-by-quadrant construction, two bits of d per level.
PixelOffset hilbert_point(uint32_t n, uint64_t d) {
  uint32_t x = 0, y = 0;
  for (uint32_t s = 1; s < n; s *= 2) {
    const uint32_t rx = 1u & static_cast<uint32_t>(d / 2);
    const uint32_t ry = 1u & static_cast<uint32_t>(d ^ rx);
    if (ry == 0) {
      if (rx == 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      std::swap(x, y);
    }
    x += s * rx;
    y += s * ry;
    d /= 4;
  }
  return {x, y};
}

// float -> IEEE half, round to nearest even (what a GPU's RGBA16F store
// does), and back.
uint16_t to_half(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000u;
  const uint32_t exp = (b >> 23) & 0xFFu;
  uint32_t man = b & 0x7FFFFFu;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (man ? 0x200u : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  const uint32_t rem = man & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: still right
  return static_cast<uint16_t>(sign | h);
}

float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  uint32_t b;
  if (exp == 0) {
    if (man == 0) {
      b = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      b = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((m & 0x3FFu) << 13);
    }
  } else if (exp == 31) {
    b = sign | 0x7F800000u | (man << 13);
  } else {
    b = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint8_t to_unorm8(float v) {
  return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
}

// One channel of an attachment of format f after the clear (0) and `n`
// rectangles writing `colour(i)`: written over, or added (blending).
template <class Colour>
void channel_bytes(PixelFormat f, uint32_t n, bool blend, const Colour& colour, size_t ch, std::byte* out) {
  switch (f) {
    case PixelFormat::kRgba8: {
      uint32_t v = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t s = to_unorm8(colour(i)[ch]);
        v = blend ? std::min(255u, v + s) : s;
      }
      out[0] = static_cast<std::byte>(v);
      return;
    }
    case PixelFormat::kRgba16f: {
      uint16_t v = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint16_t s = to_half(colour(i)[ch]);
        v = blend ? to_half(from_half(v) + from_half(s)) : s;
      }
      std::memcpy(out, &v, 2);
      return;
    }
    case PixelFormat::kRgba32f: {
      float v = 0;
      for (uint32_t i = 0; i < n; ++i) v = blend ? v + colour(i)[ch] : colour(i)[ch];
      std::memcpy(out, &v, 4);
      return;
    }
    case PixelFormat::kDepth32f: {
      const float z = 0;
      std::memcpy(out, &z, 4);
      return;
    }
  }
}

}  // namespace

TileSize effective_tile(const RasterConfig& r, uint64_t bytes_per_pixel) {
  TileSize t{r.tile_width_px, r.tile_height_px};
  if (r.tile_memory_bytes == 0) return t;
  auto can_halve = [](uint32_t side, uint32_t align) { return side % 2 == 0 && (side / 2) % align == 0; };
  while (bytes_per_pixel * t.pixels() > r.tile_memory_bytes) {
    const bool width_first = t.width_px > t.height_px;
    uint32_t& longer = width_first ? t.width_px : t.height_px;
    uint32_t& shorter = width_first ? t.height_px : t.width_px;
    const uint32_t longer_align = width_first ? r.tile_align_width_px : r.tile_align_height_px;
    const uint32_t shorter_align = width_first ? r.tile_align_height_px : r.tile_align_width_px;
    if (can_halve(longer, longer_align)) {
      longer /= 2;
    } else if (can_halve(shorter, shorter_align)) {
      shorter /= 2;
    } else {
      throw OutOfResources(fmt::format(
          "sim: {} B per pixel do not fit the tile memory ({} B) even in a {}x{} tile", bytes_per_pixel,
          r.tile_memory_bytes, t.width_px, t.height_px));
    }
  }
  return t;
}

TileWalker::TileWalker(TileOrder order, uint32_t tiles_x, uint32_t tiles_y)
    : order_(order), tiles_x_(tiles_x), tiles_y_(tiles_y), side_(std::bit_ceil(std::max({tiles_x, tiles_y, 1u}))) {}

bool TileWalker::next(TileCoord& out) {
  const uint64_t count = uint64_t{tiles_x_} * tiles_y_;
  if (given_ >= count) return false;
  switch (order_) {
    case TileOrder::row_major:
      out = {static_cast<uint32_t>(given_ % tiles_x_), static_cast<uint32_t>(given_ / tiles_x_)};
      break;
    case TileOrder::column_major:
      out = {static_cast<uint32_t>(given_ / tiles_y_), static_cast<uint32_t>(given_ % tiles_y_)};
      break;
    case TileOrder::serpentine: {
      const uint32_t y = static_cast<uint32_t>(given_ / tiles_x_), i = static_cast<uint32_t>(given_ % tiles_x_);
      out = {y % 2 ? tiles_x_ - 1 - i : i, y};
      break;
    }
    case TileOrder::morton:
    case TileOrder::hilbert:
      // Along the curve over the power-of-two square, skipping positions
      // outside the grid.
      for (;;) {
        const uint64_t d = code_++;
        PixelOffset p;
        if (order_ == TileOrder::morton)
          p = {compact_even_bits(static_cast<uint32_t>(d)), compact_even_bits(static_cast<uint32_t>(d >> 1))};
        else
          p = hilbert_point(side_, d);
        if (p.x < tiles_x_ && p.y < tiles_y_) {
          out = {p.x, p.y};
          break;
        }
      }
      break;
  }
  ++given_;
  return true;
}

std::vector<TileCoord> tile_walk(TileOrder order, uint32_t tiles_x, uint32_t tiles_y) {
  std::vector<TileCoord> out;
  TileWalker w(order, tiles_x, tiles_y);
  for (TileCoord t; w.next(t);) out.push_back(t);
  return out;
}

std::vector<PixelOffset> fragment_walk(FragmentOrder order, uint32_t w, uint32_t h) {
  std::vector<PixelOffset> out;
  out.reserve(static_cast<size_t>(w) * h);
  switch (order) {
    case FragmentOrder::row_major:
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) out.push_back({x, y});
      break;
    case FragmentOrder::row_major_quads:
      for (uint32_t qy = 0; qy < h; qy += 2)
        for (uint32_t qx = 0; qx < w; qx += 2)
          for (uint32_t i = 0; i < 4; ++i) {
            const uint32_t x = qx + (i & 1u), y = qy + (i >> 1);
            if (x < w && y < h) out.push_back({x, y});
          }
      break;
    case FragmentOrder::morton: {
      const uint32_t n = std::bit_ceil(std::max(w, h));
      for (uint64_t d = 0; d < uint64_t{n} * n && out.size() < size_t{w} * h; ++d) {
        const uint32_t x = compact_even_bits(static_cast<uint32_t>(d));
        const uint32_t y = compact_even_bits(static_cast<uint32_t>(d >> 1));
        if (x < w && y < h) out.push_back({x, y});
      }
      break;
    }
  }
  return out;
}

void check_pass(const SimConfig& c, const PassDesc& pass, const Shading& shading, bool needs_side_effects) {
  const RasterConfig& r = c.raster;
  if (pass.width == 0 || pass.height == 0) throw DeviceError("sim: a render pass needs at least one pixel");
  if (pass.width > r.max_width || pass.height > r.max_height)
    throw OutOfResources(fmt::format("sim: a {}x{} framebuffer exceeds the device's {}x{}", pass.width, pass.height,
                                     r.max_width, r.max_height));
  if (pass.colour.empty() && !pass.depth) throw DeviceError("sim: a render pass needs at least one attachment");
  const uint64_t max_alloc = std::min(c.max_alloc_bytes, kSimMaxAllocBytes);
  for (PixelFormat f : pass.colour)
    if (uint64_t{pass.width} * pass.height * pixel_bytes(f) * pass.samples > max_alloc)
      throw OutOfResources(fmt::format("sim: a {}x{} {} attachment of {} samples exceeds the {} B allocation limit",
                                       pass.width, pass.height, format_name(f), pass.samples, max_alloc));
  if (pass.colour.size() > r.max_colour_attachments)
    throw Unsupported(fmt::format("{} colour attachments; the device allows {}", pass.colour.size(),
                                  r.max_colour_attachments));
  for (PixelFormat f : pass.colour)
    if (f == PixelFormat::kDepth32f || r.rop_pixels_per_clock[idx(f)] == 0)
      throw Unsupported(fmt::format("the device does not render into {} colour attachments", format_name(f)));
  if (pass.depth && r.rop_pixels_per_clock[idx(PixelFormat::kDepth32f)] == 0)
    throw Unsupported("the device has no depth32f depth attachment");
  if (std::find(r.sample_counts.begin(), r.sample_counts.end(), pass.samples) == r.sample_counts.end())
    throw Unsupported(fmt::format("the device has no {}x MSAA", pass.samples));
  if (shading.textured) {
    if (shading.texture_px == 0 || shading.texture_samples == 0)
      throw DeviceError("sim: textured shading needs a texture of at least one pixel and one sample");
    if (r.texels_per_clock[idx(shading.filter)] == 0)
      throw Unsupported(fmt::format("the device has no {} filtering", filter_name(shading.filter)));
  }
  if (needs_side_effects && !r.fragment_side_effects)
    throw Unsupported("the device's fragment shaders cannot write storage buffers or use atomics");
  (void)effective_tile(r, pass.bytes_per_pixel());  // throws OutOfResources when no tile fits
}

PassModel model_pass(const SimConfig& c, const PassDesc& pass, const Shading& shading, bool side_effects) {
  const RasterConfig& r = c.raster;
  check_pass(c, pass, shading, side_effects);
  PassModel m;
  m.tile = effective_tile(r, pass.bytes_per_pixel());
  m.tiles = uint64_t{ceil_div(pass.width, m.tile.width_px)} * ceil_div(pass.height, m.tile.height_px);
  const uint64_t pixels = uint64_t{pass.width} * pass.height;
  const bool hsr = r.binning && r.hidden_surface_removal && !pass.blend && !side_effects && !shading.may_discard;
  const uint32_t shaded_rects = hsr ? std::min(pass.rects, 1u) : pass.rects;
  m.fragments = pixels * shaded_rects;

  const double cores = c.core.shader_cores, ghz = c.clock_ghz();
  double rop_clocks = 0;  // one ROP's clocks per fragment
  for (PixelFormat f : pass.colour)
    rop_clocks += pass.samples / (pass.blend ? r.rop_blend_pixels_per_clock[idx(f)] : r.rop_pixels_per_clock[idx(f)]);
  if (pass.depth) rop_clocks += pass.samples / r.rop_pixels_per_clock[idx(PixelFormat::kDepth32f)];
  const double frags = static_cast<double>(m.fragments);
  m.rop_ns = frags * rop_clocks / (r.rops_per_core * cores * ghz);
  if (shading.textured)
    m.texture_ns = frags * shading.texture_samples /
                   (r.texels_per_clock[idx(shading.filter)] * r.texture_units_per_core * cores * ghz);
  if (r.binning) m.tile_ns = static_cast<double>(m.tiles) * r.tile_overhead_clocks / (cores * ghz);

  const double fb_bytes = static_cast<double>(pixels) * static_cast<double>(pass.bytes_per_pixel());
  double gbps = c.dram_bandwidth_gbps;  // GB/s = B/ns
  if (!r.binning) {
    // An immediate renderer's colour traffic goes through the shared
    // caches: the first one that holds the framebuffer serves it.
    for (const CacheLevelConfig* l : c.path_levels(CachePath::load_store))
      if (!l->per_core && static_cast<double>(l->capacity_bytes) >= fb_bytes) {
        gbps = l->bytes_per_clock * ghz;
        break;
      }
  }
  const double bytes = r.binning ? fb_bytes : fb_bytes * (1.0 + shaded_rects * (pass.blend ? 2.0 : 1.0));
  m.memory_ns = bytes / gbps;
  m.ns = r.pass_overhead_ns + std::max({m.rop_ns, m.texture_ns, m.tile_ns, m.memory_ns});
  return m;
}

TicketOrder raster_order(const RasterConfig& r, const PassDesc& pass, uint32_t max_tickets, uint32_t chunk,
                         const std::function<uint32_t(uint32_t busy)>& pick) {
  TicketOrder out;
  if (pass.rects == 0 || max_tickets == 0) return out;
  const TileSize tile = effective_tile(r, pass.bytes_per_pixel());
  const uint32_t tiles_x = ceil_div(pass.width, tile.width_px), tiles_y = ceil_div(pass.height, tile.height_px);
  // The fragment order of a tile clipped to the framebuffer: the same
  // relative order as the whole tile's (each order ranks pixels by their
  // offsets alone), without listing pixels no tile can have.
  const std::vector<PixelOffset> full = fragment_walk(r.fragment_order, std::min(tile.width_px, pass.width),
                                                      std::min(tile.height_px, pass.height));

  // A work item: one tile with its first rectangle and how many.
  struct Item {
    TileCoord tile;
    uint32_t rect0 = 0, rects = 0;
  };
  TileWalker walker(r.tile_order, tiles_x, tiles_y);
  uint32_t walk_rect = 0;  // immediate: the rectangle the walker is on
  auto next_item = [&](Item& it) {
    TileCoord t;
    while (!walker.next(t)) {
      if (r.binning || ++walk_rect >= pass.rects) return false;
      walker = TileWalker(r.tile_order, tiles_x, tiles_y);
    }
    it = r.binning ? Item{t, 0, pass.rects} : Item{t, walk_rect, 1};
    return true;
  };
  // A core's progress through its item: the tile's fragments inside the
  // framebuffer (edge tiles are clipped), once per rectangle.
  struct Core {
    Item it;
    std::vector<uint32_t> pixels;  // x + y * width, in fragment order
    uint64_t pos = 0;              // over rects x pixels
  };
  auto start = [&](Core& core, const Item& it) {
    core.it = it;
    core.pixels.clear();
    const uint32_t x0 = core.it.tile.tx * tile.width_px, y0 = core.it.tile.ty * tile.height_px;
    for (const PixelOffset& p : full)
      if (x0 + p.x < pass.width && y0 + p.y < pass.height)
        core.pixels.push_back((x0 + p.x) + (y0 + p.y) * pass.width);
    core.pos = 0;
  };
  std::vector<Core> busy;
  Item it;
  while (busy.size() < r.tiles_in_flight && next_item(it)) start(busy.emplace_back(), it);
  out.pixel.reserve(max_tickets);
  out.rect.reserve(max_tickets);
  while (!busy.empty() && out.pixel.size() < max_tickets) {
    const uint32_t k = busy.size() == 1 ? 0 : std::min<uint32_t>(pick(static_cast<uint32_t>(busy.size())),
                                                                  static_cast<uint32_t>(busy.size() - 1));
    Core& core = busy[k];
    const uint64_t total = uint64_t{core.it.rects} * core.pixels.size();
    for (uint32_t i = 0; i < chunk && core.pos < total && out.pixel.size() < max_tickets; ++i, ++core.pos) {
      out.pixel.push_back(core.pixels[core.pos % core.pixels.size()]);
      out.rect.push_back(core.it.rect0 + static_cast<uint32_t>(core.pos / core.pixels.size()));
    }
    if (core.pos == total) {
      if (next_item(it)) {
        start(core, it);
      } else {
        busy.erase(busy.begin() + k);
      }
    }
  }
  return out;
}

std::vector<std::byte> pass_pixels(const PassDesc& pass, const Shading& shading) {
  const bool depth_only = pass.colour.empty();
  const PixelFormat f = depth_only ? PixelFormat::kDepth32f : pass.colour.front();
  const size_t px_bytes = pixel_bytes(f);
  // Every pixel of a full-screen pass ends the same: compute one, repeat it.
  std::byte one[16] = {};
  auto colour = [&](uint32_t i) { return flat_colour(shading.textured ? 0 : i); };
  if (depth_only) {
    channel_bytes(f, pass.rects, false, colour, 0, one);
  } else {
    const size_t ch_bytes = px_bytes / 4;
    for (size_t ch = 0; ch < 4; ++ch) channel_bytes(f, pass.rects, pass.blend, colour, ch, one + ch * ch_bytes);
  }
  const size_t n = size_t{pass.width} * pass.height;
  std::vector<std::byte> out(n * px_bytes);
  for (size_t i = 0; i < n; ++i) std::memcpy(out.data() + i * px_bytes, one, px_bytes);
  return out;
}

FrameModel model_frame(const SimConfig& c, const FrameDesc& f, const FrameDesc* previous) {
  const RasterConfig& r = c.raster;
  if (f.width == 0 || f.height == 0) throw DeviceError("sim: a frame needs at least one pixel");
  if (f.width > r.max_width || f.height > r.max_height)
    throw OutOfResources(fmt::format("sim: a {}x{} frame exceeds the device's {}x{}", f.width, f.height,
                                     r.max_width, r.max_height));
  if (f.pattern == FramePattern::kBlocks && f.block_px == 0) throw DeviceError("sim: a block pattern of 0 px");
  const uint64_t max_alloc = std::min(c.max_alloc_bytes, kSimMaxAllocBytes);
  if (uint64_t{f.width} * f.height * 4 > max_alloc)
    throw OutOfResources(fmt::format("sim: a {}x{} RGBA8 frame exceeds the {} B allocation limit", f.width, f.height,
                                     max_alloc));
  FrameModel m;
  const double cores = c.core.shader_cores, ghz = c.clock_ghz();
  const uint64_t pixels = uint64_t{f.width} * f.height;
  const double frame_bytes = static_cast<double>(pixels) * 4;
  const bool compress = !f.storage_write && r.fb_compression_block_px > 0;

  // Blocks of one colour: read (and written) at (1 - saving) of their bytes.
  double memory_bytes = frame_bytes;
  if (compress) {
    const uint32_t b = r.fb_compression_block_px;
    double saved = 0;
    for (uint32_t by = 0; by < f.height; by += b)
      for (uint32_t bx = 0; bx < f.width; bx += b) {
        const uint32_t w = std::min(b, f.width - bx), h = std::min(b, f.height - by);
        const uint32_t first = frame_texel(f, bx, by);
        bool uniform = true;
        for (uint32_t y = by; y < by + h && uniform; ++y)
          for (uint32_t x = bx; x < bx + w && uniform; ++x) uniform = frame_texel(f, x, y) == first;
        if (uniform) {
          ++m.compressed_blocks;
          saved += 4.0 * w * h * r.fb_compression_read_saving;
        }
      }
    memory_bytes -= saved;
  }

  if (f.storage_write) {
    // A compute pass writing every pixel once: its bytes to memory.
    m.stored_bytes = static_cast<uint64_t>(frame_bytes);
    m.write_ns = r.pass_overhead_ns + frame_bytes / c.dram_bandwidth_gbps;
  } else {
    // A render pass of one RGBA8 rectangle; tiles whose content equals the
    // previous frame's are not stored under transaction elimination.
    const TileSize t = effective_tile(r, pixel_bytes(PixelFormat::kRgba8));
    const uint64_t tiles = uint64_t{ceil_div(f.width, t.width_px)} * ceil_div(f.height, t.height_px);
    double stored = memory_bytes;
    if (r.transaction_elimination && previous && previous->width == f.width && previous->height == f.height) {
      for (uint32_t ty = 0; ty < f.height; ty += t.height_px)
        for (uint32_t tx = 0; tx < f.width; tx += t.width_px) {
          const uint32_t w = std::min(t.width_px, f.width - tx), h = std::min(t.height_px, f.height - ty);
          bool same = true;
          for (uint32_t y = ty; y < ty + h && same; ++y)
            for (uint32_t x = tx; x < tx + w && same; ++x) same = frame_texel(f, x, y) == frame_texel(*previous, x, y);
          if (same) ++m.eliminated_tiles;
        }
      stored *= 1.0 - static_cast<double>(m.eliminated_tiles) / static_cast<double>(tiles);
    }
    m.stored_bytes = static_cast<uint64_t>(stored);
    const double rop_ns = static_cast<double>(pixels) /
                          (r.rop_pixels_per_clock[idx(PixelFormat::kRgba8)] * r.rops_per_core * cores * ghz);
    const double tile_ns = r.binning ? static_cast<double>(tiles) * r.tile_overhead_clocks / (cores * ghz) : 0;
    m.write_ns = r.pass_overhead_ns + std::max({rop_ns, tile_ns, stored / c.dram_bandwidth_gbps});
  }
  // The read: every pixel sampled once (point) and summed by a compute pass.
  m.read_bytes = static_cast<uint64_t>(memory_bytes);
  const double texture_ns = static_cast<double>(pixels) /
                            (r.texels_per_clock[idx(TextureFilter::kPoint)] * r.texture_units_per_core * cores * ghz);
  m.read_ns = r.pass_overhead_ns + std::max(texture_ns, memory_bytes / c.dram_bandwidth_gbps);
  return m;
}

}  // namespace gpuscope::sim
