// The sim's raster model: what a tiler (or an immediate renderer) described
// by a RasterConfig does with graphics.hpp's passes and frames. Pure
// functions of the description and the pass, so that tests can check each
// rule on its own; SimGraphics (sim_graphics.cpp) adds the noise and keeps
// the state between calls.
//
// Times, for a pass of width x height pixels, `rects` rectangles, on
// `cores` shader cores at clock f (GHz):
// - ROP: every shaded fragment writes each attachment, each of its samples,
//   at that format's rate (its blend rate when blending):
//     rop_ns = fragments x sum over attachments (samples / rate) / (rops_per_core x cores x f)
// - texture (textured shading): fragments x texture_samples / (texels_per_clock[filter] x units x cores x f)
// - shading = max(rop, texture): the two units pipeline;
// - tiles (binning): tiles x tile_overhead_clocks / (cores x f): a smaller
//   tile (more bytes per pixel) costs more tiles; a tile's setup overlaps
//   the previous tile's shading, so it shows only when it outlasts it;
// - memory: binning stores each attachment once at the pass's end (clears
//   and blending stay in tile memory), at DRAM bandwidth; immediate writes
//   the framebuffer for the clear and once per rectangle (and reads it too
//   when blending), at the bandwidth of the first shared load/store cache
//   holding the framebuffer (bytes_per_clock x f), else DRAM's;
// - pass = pass_overhead_ns + max(ROP, texture, tiles, memory).
// Fragments shaded: width x height x rects, or width x height alone on a
// binning GPU with hidden-surface removal when the pass neither blends nor
// has side effects nor a shader that may discard (Shading::may_discard):
// only then is a later rectangle known opaque, and only the last survives.
#pragma once

#include "backends/graphics.hpp"
#include "backends/sim/sim_config.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace gpuscope::sim {

struct TileSize {
  uint32_t width_px = 0, height_px = 0;
  uint64_t pixels() const { return uint64_t{width_px} * height_px; }
};

// The tile a pass of `bytes_per_pixel` runs with: the configured tile,
// shrunk while bytes_per_pixel x its pixels exceed tile_memory_bytes by
// halving its longer side (its height when square), a side halved only when
// the half stays a multiple of that side's alignment (else the other side
// is halved). Throws OutOfResources when even the smallest tile does not
// fit.
TileSize effective_tile(const RasterConfig& r, uint64_t bytes_per_pixel);

// The tiles of a tiles_x x tiles_y grid as (tx, ty) tile coordinates in walk
// order: every tile of the grid exactly once. TileWalker gives them one at a
// time (small tiles over a large framebuffer are too many to list);
// tile_walk lists them.
struct TileCoord {
  uint32_t tx = 0, ty = 0;
};
class TileWalker {
 public:
  TileWalker(TileOrder order, uint32_t tiles_x, uint32_t tiles_y);
  bool next(TileCoord& out);  // false once every tile was given

 private:
  TileOrder order_;
  uint32_t tiles_x_, tiles_y_;
  uint32_t side_;       // Morton and Hilbert: the power-of-two square walked
  uint64_t given_ = 0;  // tiles given so far
  uint64_t code_ = 0;   // Morton and Hilbert: the next position on the curve
};
std::vector<TileCoord> tile_walk(TileOrder order, uint32_t tiles_x, uint32_t tiles_y);

// The pixels of a w x h tile (offsets within it) in fragment order.
struct PixelOffset {
  uint32_t x = 0, y = 0;
};
std::vector<PixelOffset> fragment_walk(FragmentOrder order, uint32_t w, uint32_t h);

// Why a pass cannot run (Unsupported, OutOfResources), as GraphicsFacet's
// contract says, or nothing. `needs_side_effects` for trace_raster. An
// attachment larger than the device's largest allocation (at most
// kSimMaxAllocBytes) does not fit.
void check_pass(const SimConfig& c, const PassDesc& pass, const Shading& shading, bool needs_side_effects);

struct PassModel {
  TileSize tile;
  uint64_t tiles = 0;
  uint64_t fragments = 0;  // fragment shader invocations
  double rop_ns = 0, texture_ns = 0, tile_ns = 0, memory_ns = 0;
  double ns = 0;  // the pass, without noise
};
// `side_effects`: the fragment shader writes storage (trace_raster), so
// hidden-surface removal cannot drop any fragment.
PassModel model_pass(const SimConfig& c, const PassDesc& pass, const Shading& shading, bool side_effects);

// The shading order of a pass's fragments, as tickets. Work items are tiles
// (binning: all rectangles of the tile) or (rectangle, tile) pairs
// (immediate), queued in walk order; tiles_in_flight cores each take the
// next item when free. Each step `pick(busy)` chooses which of the busy
// cores (an index below busy) shades its next `chunk` fragments, so that
// concurrent tiles' tickets interleave. Stops after max_tickets.
struct TicketOrder {
  std::vector<uint32_t> pixel;
  std::vector<uint32_t> rect;
};
TicketOrder raster_order(const RasterConfig& r, const PassDesc& pass, uint32_t max_tickets, uint32_t chunk,
                         const std::function<uint32_t(uint32_t busy)>& pick);

// The first colour attachment (or the depth attachment of a depth-only
// pass) after `pass` with `shading`, rows of width pixels tightly packed, as
// a GPU stores it: the clear (zero), then each rectangle's colour written or
// added (additive blending at the attachment's precision, rectangle by
// rectangle). Flat shading writes flat_colour(i); the sim's texture holds
// flat_colour(0) in every texel of every level, so textured shading's mean
// is that colour. Depth holds 0 (the rectangles lie at z = 0).
std::vector<std::byte> pass_pixels(const PassDesc& pass, const Shading& shading);

// A frame's write and read, without noise. `previous`: the content the
// shared image held before (nullptr: none yet); tiles equal to it are not
// stored again under transaction elimination. A frame larger than the
// device's largest allocation is OutOfResources.
struct FrameModel {
  double write_ns = 0, read_ns = 0;
  uint64_t stored_bytes = 0;      // written to memory
  uint64_t read_bytes = 0;        // read from memory
  uint64_t eliminated_tiles = 0;  // stores skipped by transaction elimination
  uint64_t compressed_blocks = 0; // blocks of one colour (rendered frames with compression)
};
FrameModel model_frame(const SimConfig& c, const FrameDesc& f, const FrameDesc* previous);

}  // namespace gpuscope::sim
