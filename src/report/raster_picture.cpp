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

RasterPicture raster_picture(const Series& order) {
  RasterPicture p;
  const uint64_t width = meta_count(order, "width"), height = meta_count(order, "height");
  p.tickets_taken = meta_count(order, "tickets");
  if (width == 0 || height == 0) {
    p.problem = "the series' meta has no framebuffer width and height";
    return p;
  }
  if (width > kMaxPicturePixels || height > kMaxPicturePixels || width * height > kMaxPicturePixels) {
    p.problem = fmt::format("a {}x{} framebuffer is larger than the report draws ({} pixels at most)", width,
                            height, kMaxPicturePixels);
    return p;
  }
  p.width = static_cast<uint32_t>(width);
  p.height = static_cast<uint32_t>(height);
  p.ticket.assign(width * height, RasterPicture::kNoTicket);
  for (const Point& pt : order.points) {
    const int64_t ticket = whole_below(pt.x, RasterPicture::kNoTicket);
    const int64_t pixel = whole_below(pt.y, width * height);
    if (ticket < 0 || pixel < 0 || p.ticket[static_cast<size_t>(pixel)] != RasterPicture::kNoTicket) {
      ++p.ignored;
      continue;
    }
    p.ticket[static_cast<size_t>(pixel)] = static_cast<uint32_t>(ticket);
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

std::vector<uint64_t> first_n_steps(const RasterPicture& p, double tile_pixels) {
  std::vector<double> wanted;
  if (std::isfinite(tile_pixels) && tile_pixels >= 1)
    wanted = {tile_pixels, 4 * tile_pixels, 16 * tile_pixels};
  else {
    const double all = static_cast<double>(p.width) * p.height;
    wanted = {all / 64, all / 16, all / 4};
  }
  std::vector<uint64_t> out;
  for (double w : wanted) {
    if (!(w >= 16) || w >= static_cast<double>(p.recorded)) continue;
    const auto n = static_cast<uint64_t>(std::llround(w));
    if (n < p.recorded && (out.empty() || out.back() != n)) out.push_back(n);
  }
  return out;
}

BinningPicture binning_picture(const Series& binning) {
  BinningPicture b;
  uint64_t rects = meta_count(binning, "rects");
  uint64_t last_ticket = 0;
  std::vector<std::pair<uint64_t, uint64_t>> records;  // (ticket, rectangle)
  for (const Point& pt : binning.points) {
    const int64_t t = whole_below(pt.x, uint64_t{1} << 40);
    const int64_t r = whole_below(pt.y, uint64_t{1} << 32);
    if (t < 0 || r < 0) continue;
    records.emplace_back(t, r);
    last_ticket = std::max<uint64_t>(last_ticket, t);
    if (!binning.meta.contains("rects")) rects = std::max<uint64_t>(rects, r + 1);
  }
  std::erase_if(records, [&](const auto& rec) { return rec.second >= rects; });
  if (records.empty() || rects == 0) {
    b.problem = rects == 0 ? "the series' meta has no rectangle count" : "no record names a rectangle";
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
