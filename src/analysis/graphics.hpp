// The graphics probes' findings (issue 15), from their series:
// - graphics.raster.order (the ticket each fragment of a one-rectangle pass
//   took, by ticket: its pixel) gives the tile's width and height and the
//   walk between tiles (graphics_raster.cpp);
// - graphics.raster.binning (a two-rectangle pass, by ticket: its
//   rectangle) whether the device bins;
// - graphics.tile_memory (tile pixels against bytes per pixel) the tile
//   memory, from where the tile starts to shrink (graphics_tile_memory.cpp);
// - graphics.rop.*, graphics.texture.* the fill rates, graphics.fb_compression.*
//   the compression block, graphics.transaction_elimination whether an
//   identical redraw writes less (graphics_rates.cpp).
// Every function is pure: series (or a trace) in, findings out; where the
// data does not decide, the finding is absent and note_unfound() says why.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"
#include "core/series.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

// Raster traces (probes/graphics/raster.cpp): a two-rectangle pass's
// ticket field at every pixel, and, where that target is too small to show
// the tile, one over a larger target at every stride-th pixel.
inline constexpr const char* kRasterOrderSeries = "graphics.raster.order";
inline constexpr const char* kRasterWideSeries = "graphics.raster.order_wide";
inline constexpr const char* kTileMemorySeries = "graphics.tile_memory";
inline constexpr const char* kRopSeriesPrefix = "graphics.rop.";
inline constexpr const char* kTextureFillSeriesPrefix = "graphics.texture.";
inline constexpr const char* kFbRenderedSeries = "graphics.fb_compression.rendered";
inline constexpr const char* kFbStorageSeries = "graphics.fb_compression.storage";
inline constexpr const char* kTxElimSeries = "graphics.transaction_elimination";

// One rectangle's tickets from a raster trace: ticket[c] is the ticket the
// fragment at cell c = cx + cy * width took (pixel (cx, cy) x stride),
// kNoTicket where none was recorded. width and height count cells.
struct TicketField {
  static constexpr uint32_t kNoTicket = UINT32_MAX;
  uint32_t width = 0, height = 0;
  uint32_t stride = 1;  // pixels per cell along each axis
  std::vector<uint32_t> ticket;
};

// Rectangle `rect`'s field from a trace series (x the cell over rectangle,
// row and column; y its ticket; meta cells_x, cells_y, stride, rects).
// Empty (width 0) where the series is not such a trace; `why` says so.
TicketField series_field(const Series& trace, uint32_t rect, std::string* why = nullptr);

// The tile read from a trace along one axis. A tile boundary is where the
// ticket step between neighbouring pixels stands out, in most rows (or
// columns), from the steps inside tiles: inside a tile one worker shades
// its pixels in its own order, so neighbours' tickets are close; across a
// boundary the neighbour was shaded by another visit (a tile later in the
// walk, or another worker in flight at the same time), whose tickets are
// unrelated. The size is the largest period whose every multiple (below the
// target's edge, where the last tile may be cut short) is such a boundary
// and no other position is.
struct TileAxis {
  bool found = false;
  uint32_t size_px = 0;
  uint32_t boundaries = 0;  // boundary positions inside the target at multiples of size_px
  double separation = 0;    // boundaries' step over the steps inside tiles (both robust quantiles)
  double confidence = 0;
  std::string reason;  // why not found, or what limits the confidence
};

struct TileReading {
  TileAxis width, height;
  // The walk between tiles, where both axes were found: "row-major",
  // "column-major", "serpentine", "morton", "hilbert" or "other"; empty
  // where the tiles' order fits none clearly enough to name.
  std::string order;
  double order_confidence = 0;
  double order_tau = 0;  // Kendall's tau of the tiles' order against the order named
  std::string order_reason;
  uint32_t tiles_x = 0, tiles_y = 0;
};

// Reads the tile and the walk from a field (pure; no note_unfound).
TileReading read_tiles(const TicketField& field);

// Fills r's order fields from the field, given r's width and height
// (graphics_walk.cpp; read_tiles calls it).
void read_walk(const TicketField& field, TileReading& r);

// How far the field's tiles' order (each tile's median ticket) agrees with
// a named walk over its tiles of tile_w_px x tile_h_px: Kendall's tau (1:
// the same order). Exposed for tests.
double walk_agreement(const TicketField& field, uint32_t tile_w_px, uint32_t tile_h_px, const std::string& walk);

// Binning from a two-rectangle trace: at each recorded pixel, the tickets
// between its rectangle-0 and rectangle-1 fragments. Rectangle 1 follows
// rectangle 0 at a pixel by the whole target's fragments on an immediate
// renderer (rectangle 0 covers the screen first), by about a tile's on a
// binning one (each tile shades both before the next). `tiles`: how many
// tiles the found tile makes on the target (0: none found): a bin as large
// as the target looks immediate.
struct BinningReading {
  bool decided = false;
  bool binned = false;
  double near_fraction = 0;  // pixels whose rectangle 1 came within half the target's fragments
  double median_gap = 0;     // median ticket gap over the target's pixels
  double confidence = 0;
  std::string reason;
};
BinningReading read_binning(const TicketField& first, const TicketField& second, uint64_t pixels,
                            uint64_t tiles);

// graphics.tile.width_px, .height_px, .order and graphics.binning from
// graphics.raster.order and, where present, graphics.raster.order_wide
// (each axis from the trace with more tile boundaries along it).
std::vector<Finding> raster_findings(const Series* order, const Series* wide);

// graphics.tile.memory_bytes from graphics.tile_memory: past the knee (the
// tile shrunk from its largest), tile pixels x bytes per pixel is the tile
// memory the device fills; the largest such product is the estimate.
// Unfound where `binning` (graphics.binning, when found) says the GPU
// renders immediately, or where the tile grows again with bytes per pixel.
std::vector<Finding> tile_memory_findings(const Series& tile_memory, const Finding* binning = nullptr);

// graphics.rop.<format>[.blend].gpixels and graphics.texture.<filter>.gtexels
// from every series under those prefixes; texels per clock per core in the
// note where the device's clock and core count are known.
std::vector<Finding> fill_rate_findings(const Results& r);

// graphics.fb_compression.block_px: the smallest block size at which the
// rendered frames' read rate has risen half way from noise's to flat's,
// where flat reads clearly faster than noise and the storage frames do not
// rise alike.
std::vector<Finding> fb_compression_findings(const Series& rendered, const Series* storage);

// graphics.transaction_elimination (experimental): an identical redraw's
// write pass clearly cheaper than a changed one's.
std::vector<Finding> transaction_elimination_findings(const Series& txelim);

// Everything above that `r` has series for.
std::vector<Finding> graphics_findings(const Results& r);

}  // namespace gpuscope::analysis
