// The raster probe's traces as pictures for report.html (issue 15): the
// framebuffer with every recorded pixel coloured by the ticket its fragment
// took (as the published triangle-binning pictures show it), the found tile
// grid over it, and the binning trace as a strip of rectangle against ticket.
// Series contract: docs/results-format.md, graphics.raster.order and
// .order_wide (x the cell over rectangle, row and column, y its ticket;
// meta width, height, stride, cells_x, cells_y, rects, tickets).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/series.hpp"
#include "report/png_image.hpp"

namespace gpuscope {

// The largest framebuffer drawn: a bigger trace is described, not drawn.
inline constexpr uint64_t kMaxPicturePixels = uint64_t{2048} * 2048;

// The most rectangles a trace series is drawn with (the raster probe keeps
// 2): more is a damaged file.
inline constexpr uint64_t kMaxTraceRects = 256;

// A trace series' field shape, from its meta; `problem` says what is
// missing or too large to draw.
struct TraceCells {
  uint64_t cells_x = 0, cells_y = 0, stride = 0, rects = 0;
  uint64_t width = 0, height = 0;  // the framebuffer, pixels
  std::string problem;
};
TraceCells trace_cells(const Series& trace);

// Which ticket rectangle 0's fragment took at each recorded pixel of a
// traced pass: one picture pixel per recorded pixel (every stride-th).
struct RasterPicture {
  static constexpr uint32_t kNoTicket = std::numeric_limits<uint32_t>::max();
  uint32_t width = 0, height = 0;  // picture pixels: recorded pixels per row and column
  uint32_t stride = 1;             // framebuffer pixels per picture pixel along each axis
  std::vector<uint32_t> ticket;    // by picture pixel x + y * width; kNoTicket where none was recorded
  uint64_t recorded = 0;           // pixels with a ticket
  uint32_t last_ticket = 0;        // the largest ticket recorded
  uint64_t tickets_taken = 0;      // meta "tickets": every fragment shaded, recorded or not; 0 when absent
  uint64_t ignored = 0;            // records whose ticket is not a whole number, or a pixel's second
  std::string problem;             // why there is no picture; empty when there is one
};

// Reads a raster trace series. A missing or bad shape (trace_cells), a
// field past kMaxPicturePixels or no usable record sets `problem`.
RasterPicture raster_picture(const Series& order);

// Palette of the ticket pictures: kRampColours colours of a perceptual ramp
// (viridis: dark violet through blue and green to yellow), then grey for
// pixels without a ticket.
inline constexpr size_t kRampColours = 255;
inline constexpr uint8_t kGreyIndex = kRampColours;
const std::vector<Rgb>& ticket_palette();
// The ramp at t in [0, 1] (clamped).
Rgb ramp_colour(double t);

// The picture of the first `first_n` tickets (0: every recorded one): ticket
// t < first_n gets ramp level floor(t * kRampColours / first_n), every other
// pixel grey.
IndexedImage ticket_image(const RasterPicture& p, uint64_t first_n = 0);

// The tile grid's inner lines: x = k * tile_width for 0 < x < width, and so
// for y. Empty both ways when a size is not a positive whole number or the
// grid would have more than 1024 lines a side (too fine to read).
struct TileGrid {
  std::vector<uint32_t> xs, ys;
};
TileGrid tile_grid(uint32_t width, uint32_t height, double tile_width, double tile_height);

// The first-N views beside the whole picture: one tile's fragments and four
// and sixteen tiles' where the tile is known (`tile_fragments` > 0: its
// pixels x the rectangles drawn), else 1/64,
// 1/16 and 1/4 of the framebuffer; only counts of at least 16 and up to the
// last ticket recorded, without repeats.
std::vector<uint64_t> first_n_steps(const RasterPicture& p, double tile_fragments);

// A raster trace's recorded fragments as an image: a column per span of tickets (at most
// 512 columns), a row per rectangle (at most 256); each cell's shade is the
// share of the column's fragments that belonged to the row's rectangle
// (palette: white at 0 to dark blue at 1). A binning GPU shades all of a
// tile's rectangles before the next tile, so every rectangle recurs along
// the strip; an immediate one shades rectangle 0 everywhere first, a
// staircase.
struct BinningPicture {
  IndexedImage image;
  uint32_t rects = 0;  // rows: rectangles (rows shown = min(rects, 256))
  uint64_t tickets_per_column = 0;
  uint64_t records = 0;
  std::string problem;  // why there is no picture; empty when there is one
};
BinningPicture binning_picture(const Series& trace);

}  // namespace gpuscope
