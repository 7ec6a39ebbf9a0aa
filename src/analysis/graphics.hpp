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

inline constexpr const char* kRasterOrderSeries = "graphics.raster.order";
inline constexpr const char* kRasterBinningSeries = "graphics.raster.binning";
inline constexpr const char* kTileMemorySeries = "graphics.tile_memory";
inline constexpr const char* kRopSeriesPrefix = "graphics.rop.";
inline constexpr const char* kTextureFillSeriesPrefix = "graphics.texture.";
inline constexpr const char* kFbRenderedSeries = "graphics.fb_compression.rendered";
inline constexpr const char* kFbStorageSeries = "graphics.fb_compression.storage";
inline constexpr const char* kTxElimSeries = "graphics.transaction_elimination";

// A raster trace on a width x height target: ticket[p] is the ticket the
// fragment at pixel p = x + y * width took, kNoTicket where none was
// recorded (a trace cut short by max_tickets).
struct TicketField {
  static constexpr uint32_t kNoTicket = UINT32_MAX;
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> ticket;
};

// The field of a trace given by ticket: pixel_by_ticket[t] is the pixel the
// fragment with ticket t shaded. Only each pixel's first fragment counts
// (a one-rectangle trace has one per pixel). Pixels past the target are
// ignored.
TicketField ticket_field(const std::vector<uint32_t>& pixel_by_ticket, uint32_t width, uint32_t height);

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
// a named walk over tiles_x x tiles_y tiles: Kendall's tau (1: the same
// order). Exposed for tests.
double walk_agreement(const TicketField& field, uint32_t tile_w, uint32_t tile_h, const std::string& walk);

// Binning from a two-or-more-rectangle trace given by ticket: the fraction
// of the first half screen's worth of tickets that belong to a rectangle
// after the first (0: rectangle 0 went all over the screen first).
struct BinningReading {
  bool decided = false;
  bool binned = false;
  double later_fraction = 0;
  double confidence = 0;
  std::string reason;
};
BinningReading read_binning(const std::vector<uint32_t>& rect_by_ticket, uint64_t pixels, bool tile_found);

// graphics.tile.width_px, .height_px, .order from graphics.raster.order;
// graphics.binning from graphics.raster.binning (nullptr: absent).
std::vector<Finding> raster_findings(const Series* order, const Series* binning);

// graphics.tile.memory_bytes from graphics.tile_memory: past the knee (the
// tile shrunk from its largest), tile pixels x bytes per pixel is the tile
// memory the device fills; the largest such product is the estimate.
std::vector<Finding> tile_memory_findings(const Series& tile_memory);

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
