#include "report/raster_picture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gpuscope {

namespace {

// A meta field that is a positive whole number, else 0.
uint64_t meta_count(const Series& s, const char* key) {
  if (!s.meta.is_object() || !s.meta.contains(key) || !s.meta[key].is_number()) return 0;
  const double v = s.meta[key].get<double>();
  return std::isfinite(v) && v >= 1 && v == std::floor(v) && v < 1e15 ? static_cast<uint64_t>(v) : 0;
}

// A point's coordinate as a whole number below `limit`, else -1.
int64_t whole_below(double v, uint64_t limit) {
  if (!std::isfinite(v) || v < 0 || v != std::floor(v) || v >= static_cast<double>(limit)) return -1;
  return static_cast<int64_t>(v);
}

// Viridis at t = 0, 1/8, ... 1 (matplotlib's colour map, sampled).
constexpr std::array<Rgb, 9> kViridis = {{{0x44, 0x01, 0x54},
                                          {0x47, 0x2c, 0x7a},
                                          {0x3b, 0x51, 0x8b},
                                          {0x2c, 0x71, 0x8e},
                                          {0x21, 0x90, 0x8d},
                                          {0x27, 0xad, 0x81},
                                          {0x5c, 0xc8, 0x63},
                                          {0xaa, 0xdc, 0x32},
                                          {0xfd, 0xe7, 0x25}}};
constexpr Rgb kGrey = {0xc8, 0xc8, 0xc8};

constexpr uint32_t kMaxColumns = 512, kMaxRows = 256;
constexpr size_t kMaxGridLines = 1024;

}  // namespace

TraceCells trace_cells(const Series& trace) {
  TraceCells c;
  c.cells_x = meta_count(trace, "cells_x");
  c.cells_y = meta_count(trace, "cells_y");
  c.stride = meta_count(trace, "stride");
  c.rects = meta_count(trace, "rects");
  c.width = meta_count(trace, "width");
  c.height = meta_count(trace, "height");
  if (c.cells_x == 0 || c.cells_y == 0 || c.stride == 0 || c.rects == 0 || c.width == 0 || c.height == 0)
    c.problem = "the series' meta lacks the trace's width, height, cells_x, cells_y, stride or rects (a trace "
                "gpuscope wrote before traces were ticket fields)";
  else if (c.rects > kMaxTraceRects)
    c.problem = fmt::format("{} rectangles: a trace holds at most {}", c.rects, kMaxTraceRects);
  else if (c.cells_x > kMaxPicturePixels || c.cells_y > kMaxPicturePixels ||
           c.cells_x * c.cells_y > kMaxPicturePixels)
    c.problem = fmt::format("a {}x{} field is larger than the report draws ({} pixels at most)", c.cells_x,
                            c.cells_y, kMaxPicturePixels);
  return c;
}

RasterPicture raster_picture(const Series& order) {
  RasterPicture p;
  const TraceCells c = trace_cells(order);
  p.tickets_taken = meta_count(order, "tickets");
  if (!c.problem.empty()) {
    p.problem = c.problem;
    return p;
  }
  p.width = static_cast<uint32_t>(c.cells_x);
  p.height = static_cast<uint32_t>(c.cells_y);
  p.stride = static_cast<uint32_t>(c.stride);
  const uint64_t cells = c.cells_x * c.cells_y;
  p.ticket.assign(cells, RasterPicture::kNoTicket);
  // Rectangle 0's plane: points with x below the cells.
  for (const Point& pt : order.points) {
    const int64_t cell = whole_below(pt.x, cells);
    if (cell < 0 || pt.y == static_cast<double>(RasterPicture::kNoTicket)) continue;
    const int64_t ticket = whole_below(pt.y, RasterPicture::kNoTicket);
    if (ticket < 0 || p.ticket[static_cast<size_t>(cell)] != RasterPicture::kNoTicket) {
      ++p.ignored;
      continue;
    }
    p.ticket[static_cast<size_t>(cell)] = static_cast<uint32_t>(ticket);
    p.last_ticket = std::max(p.last_ticket, static_cast<uint32_t>(ticket));
    ++p.recorded;
  }
  if (p.recorded == 0) p.problem = "no record names a pixel of the framebuffer";
  return p;
}

Rgb ramp_colour(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const double at = t * (kViridis.size() - 1);
  const size_t i = std::min(static_cast<size_t>(at), kViridis.size() - 2);
  const double f = at - static_cast<double>(i);
  Rgb c{};
  for (size_t k = 0; k < 3; ++k)
    c[k] = static_cast<uint8_t>(std::lround(kViridis[i][k] + f * (kViridis[i + 1][k] - kViridis[i][k])));
  return c;
}

const std::vector<Rgb>& ticket_palette() {
  static const std::vector<Rgb> palette = [] {
    std::vector<Rgb> p;
    for (size_t i = 0; i < kRampColours; ++i)
      p.push_back(ramp_colour(static_cast<double>(i) / (kRampColours - 1)));
    p.push_back(kGrey);
    return p;
  }();
  return palette;
}

IndexedImage ticket_image(const RasterPicture& p, uint64_t first_n) {
  IndexedImage img;
  img.width = p.width;
  img.height = p.height;
  img.palette = ticket_palette();
  if (first_n == 0) first_n = uint64_t{p.last_ticket} + 1;
  img.index.resize(p.ticket.size());
  for (size_t i = 0; i < p.ticket.size(); ++i) {
    const uint32_t t = p.ticket[i];
    img.index[i] = t != RasterPicture::kNoTicket && t < first_n
                       ? static_cast<uint8_t>(uint64_t{t} * kRampColours / first_n)
                       : kGreyIndex;
  }
  return img;
}

TileGrid tile_grid(uint32_t width, uint32_t height, double tile_width, double tile_height) {
  const auto whole = [](double v) { return std::isfinite(v) && v >= 1 && v == std::floor(v) && v < 1e9; };
  TileGrid g;
  if (!whole(tile_width) || !whole(tile_height)) return g;
  const auto tw = static_cast<uint64_t>(tile_width), th = static_cast<uint64_t>(tile_height);
  if ((width - 1) / tw > kMaxGridLines || (height - 1) / th > kMaxGridLines) return g;
  for (uint64_t x = tw; x < width; x += tw) g.xs.push_back(static_cast<uint32_t>(x));
  for (uint64_t y = th; y < height; y += th) g.ys.push_back(static_cast<uint32_t>(y));
  return g;
}

std::vector<uint64_t> first_n_steps(const RasterPicture& p, double tile_fragments) {
  std::vector<double> wanted;
  if (std::isfinite(tile_fragments) && tile_fragments >= 1)
    wanted = {tile_fragments, 4 * tile_fragments, 16 * tile_fragments};
  else {
    const double all = static_cast<double>(p.width) * p.height;
    wanted = {all / 64, all / 16, all / 4};
  }
  std::vector<uint64_t> out;
  for (double w : wanted) {
    const double tickets = static_cast<double>(p.last_ticket) + 1;
    if (!(w >= 16) || w >= tickets) continue;
    const auto n = static_cast<uint64_t>(std::llround(w));
    if (n < p.last_ticket + uint64_t{1} && (out.empty() || out.back() != n)) out.push_back(n);
  }
  return out;
}

BinningPicture binning_picture(const Series& trace) {
  BinningPicture b;
  const TraceCells c = trace_cells(trace);
  if (!c.problem.empty()) {
    b.problem = c.problem;
    return b;
  }
  const uint64_t rects = c.rects, cells = c.cells_x * c.cells_y;
  uint64_t last_ticket = 0;
  std::vector<std::pair<uint64_t, uint64_t>> records;  // (ticket, rectangle)
  for (const Point& pt : trace.points) {
    const int64_t cell = whole_below(pt.x, cells * rects);
    const int64_t t = whole_below(pt.y, RasterPicture::kNoTicket);
    if (cell < 0 || t < 0) continue;
    records.emplace_back(t, static_cast<uint64_t>(cell) / cells);
    last_ticket = std::max<uint64_t>(last_ticket, t);
  }
  if (records.empty()) {
    b.problem = "no record names a pixel of the framebuffer";
    return b;
  }
  b.rects = static_cast<uint32_t>(std::min<uint64_t>(rects, std::numeric_limits<uint32_t>::max()));
  b.records = records.size();
  const uint64_t span = last_ticket + 1;
  b.tickets_per_column = (span + kMaxColumns - 1) / kMaxColumns;
  const auto columns = static_cast<uint32_t>((span + b.tickets_per_column - 1) / b.tickets_per_column);
  const auto rows = static_cast<uint32_t>(std::min<uint64_t>(rects, kMaxRows));
  std::vector<uint32_t> count(size_t{columns} * rows, 0), in_column(columns, 0);
  for (const auto& [t, r] : records) {
    const uint64_t column = t / b.tickets_per_column;
    const uint64_t row = r * rows / rects;
    ++count[row * columns + column];
    ++in_column[column];
  }
  b.image.width = columns;
  b.image.height = rows;
  constexpr Rgb kEmpty = {0xff, 0xff, 0xff}, kFull = {0x0b, 0x3c, 0x7d};
  for (int i = 0; i < 256; ++i) {
    Rgb c{};
    for (size_t k = 0; k < 3; ++k)
      c[k] = static_cast<uint8_t>(std::lround(kEmpty[k] + (kFull[k] - kEmpty[k]) * i / 255.0));
    b.image.palette.push_back(c);
  }
  b.image.index.resize(count.size());
  for (uint32_t row = 0; row < rows; ++row)
    for (uint32_t column = 0; column < columns; ++column) {
      const uint32_t n = count[size_t{row} * columns + column];
      b.image.index[size_t{row} * columns + column] =
          in_column[column]
              ? static_cast<uint8_t>((uint64_t{n} * 255 + in_column[column] - 1) / in_column[column])
              : 0;
    }
  return b;
}

}  // namespace gpuscope
