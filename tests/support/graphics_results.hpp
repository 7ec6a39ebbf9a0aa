// A run with every graphics series and finding of issue 15's contract
// (docs/results-format.md), made up for the reports' tests: a raster trace
// as llvmpipe gives one (64 x 64 px tiles walked row-major, four threads
// taking a tile each, their fragments interleaved, each tile's two
// rectangles in turn), the
// tile-memory curve of a 64 KiB tile memory, fill rates, framebuffer
// compression and transaction elimination.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "core/results.hpp"
#include "support/findings.hpp"

namespace gpuscope::test {

struct GraphicsRunShape {
  uint32_t width = 512, height = 512;  // framebuffer, pixels
  uint32_t tile = 64;                  // square tiles, pixels a side
  uint32_t threads = 4;                // tiles shaded at once
  uint32_t rects = 2;                  // full-screen rectangles; each tile shades all of them in turn
};

// A trace by ticket: the pixel (x + y * width) and rectangle of each.
struct TicketLog {
  std::vector<uint32_t> pixel, rect;
};

// The order a binning tiled rasteriser shades fragments in: tiles taken
// row-major by `threads` workers, each shading its tile row by row once per
// rectangle, the workers taking turns fragment by fragment.
inline TicketLog tiled_raster_order(const GraphicsRunShape& s) {
  const uint32_t tiles_x = (s.width + s.tile - 1) / s.tile, tiles_y = (s.height + s.tile - 1) / s.tile;
  std::vector<std::vector<uint32_t>> tiles;
  for (uint32_t ty = 0; ty < tiles_y; ++ty)
    for (uint32_t tx = 0; tx < tiles_x; ++tx) {
      std::vector<uint32_t> pixels;
      for (uint32_t y = ty * s.tile; y < std::min(s.height, (ty + 1) * s.tile); ++y)
        for (uint32_t x = tx * s.tile; x < std::min(s.width, (tx + 1) * s.tile); ++x)
          pixels.push_back(x + y * s.width);
      tiles.push_back(std::move(pixels));
    }
  TicketLog order;
  struct Worker {
    size_t tile, next;  // next: over rects x the tile's pixels
  };
  std::vector<Worker> workers;
  size_t next_tile = 0;
  while (workers.size() < s.threads && next_tile < tiles.size()) workers.push_back({next_tile++, 0});
  while (!workers.empty()) {
    for (size_t w = 0; w < workers.size();) {
      Worker& k = workers[w];
      const std::vector<uint32_t>& px = tiles[k.tile];
      order.pixel.push_back(px[k.next % px.size()]);
      order.rect.push_back(static_cast<uint32_t>(k.next / px.size()));
      if (++k.next == px.size() * s.rects) {
        if (next_tile < tiles.size()) {
          k = {next_tile++, 0};
        } else {
          workers.erase(workers.begin() + static_cast<ptrdiff_t>(w));
          continue;
        }
      }
      ++w;
    }
  }
  return order;
}

// A raster trace series as the raster probe writes one
// (docs/results-format.md): each of `rects` rectangles' lowest ticket at
// every stride-th pixel, from an order by ticket.
inline Series raster_field_series(const std::string& id, const TicketLog& order, uint32_t width,
                                  uint32_t height, uint32_t rects, uint32_t stride = 1) {
  const uint32_t cx = (width + stride - 1) / stride, cy = (height + stride - 1) / stride;
  std::vector<uint32_t> field(size_t{cx} * cy * rects, UINT32_MAX);
  for (size_t t = 0; t < order.pixel.size(); ++t) {
    const uint32_t x = order.pixel[t] % width, y = order.pixel[t] / width;
    if (x % stride || y % stride || order.rect[t] >= rects) continue;
    uint32_t& cell = field[(size_t{order.rect[t]} * cy + y / stride) * cx + x / stride];
    cell = std::min(cell, static_cast<uint32_t>(t));
  }
  Series s;
  s.id = id;
  s.probe = "raster";
  s.x = {"cell", ""};
  s.y = {"ticket", ""};
  s.points.reserve(field.size());
  for (size_t k = 0; k < field.size(); ++k) s.points.push_back({double(k), double(field[k]), {double(field[k])}});
  s.meta = {{"width", width},   {"height", height}, {"stride", stride},
            {"cells_x", cx},    {"cells_y", cy},    {"rects", rects},
            {"rects_drawn", rects}, {"tickets", order.pixel.size()}};
  return s;
}

inline Series graphics_series(std::string id, std::string probe, Axis x, Axis y) {
  Series s;
  s.id = std::move(id);
  s.probe = std::move(probe);
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

inline Results graphics_results(const GraphicsRunShape& shape = {}) {
  Results r;
  r.tool_version = "0.1.0";
  r.device.id = "vulkan:0";
  r.device.name = "Tiled Test GPU";
  r.device.type = "gpu";
  r.device.api = "Vulkan 1.3";
  r.run["command"] = "gpuscope run --probes raster,tilemem,rop,texfill,fbcompress,txelim";

  r.series.push_back(raster_field_series("graphics.raster.order", tiled_raster_order(shape), shape.width,
                                         shape.height, shape.rects));

  Series tilemem =
      graphics_series("graphics.tile_memory", "tilemem", {"bytes per pixel", "B"}, {"tile pixels", "px"});
  for (double bpp : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    const double px = std::min(4096.0, 65536.0 / bpp);
    tilemem.points.push_back({bpp, px, {px}});
  }
  r.series.push_back(tilemem);

  Series rendered =
      graphics_series("graphics.fb_compression.rendered", "fbcompress", {"block", "px"}, {"read", "GB/s"});
  Series storage =
      graphics_series("graphics.fb_compression.storage", "fbcompress", {"block", "px"}, {"read", "GB/s"});
  for (const auto& [block, gbps] :
       std::vector<std::pair<double, double>>{{0, 400}, {4, 390}, {8, 380}, {16, 200}, {512, 150}}) {
    rendered.points.push_back({block, gbps, {gbps, gbps * 1.02}});
    storage.points.push_back({block, 150, {150, 151}});
  }
  r.series.push_back(rendered);
  r.series.push_back(storage);
  Series txelim = graphics_series("graphics.transaction_elimination", "txelim", {"content changed", ""},
                                  {"write per pass", "ns"});
  txelim.points = {{0, 50000, {49000, 50000, 51000}}, {1, 90000, {89000, 90000, 91000}}};
  r.series.push_back(txelim);

  r.findings = {
      make_finding("graphics.tile.width_px", double(shape.tile), "px", 0.95, {}, {},
                   {"graphics.raster.order"}),
      make_finding("graphics.tile.height_px", double(shape.tile), "px", 0.95, {}, {},
                   {"graphics.raster.order"}),
      make_finding("graphics.binning", true, "", 0.8, {}, {}, {"graphics.raster.order"}),
      make_finding("graphics.tile.memory_bytes", 65536.0, "B", 0.85, 61440.0, 69632.0,
                   {"graphics.tile_memory"}),
      make_finding("graphics.rop.rgba8.gpixels", 12.0, "Gpixel/s", 0.9, 11.5, 12.4),
      make_finding("graphics.rop.rgba8.blend.gpixels", 6.0, "Gpixel/s", 0.85, 5.9, 6.1),
      make_finding("graphics.rop.rgba16f.gpixels", 6.0, "Gpixel/s", 0.4, 4.0, 7.0),
      make_finding("graphics.texture.bilinear.gtexels", 40.0, "Gtexel/s", 0.9, 39.0, 41.0),
      make_finding("graphics.texture.trilinear.gtexels", 20.0, "Gtexel/s", 0.9, 19.0, 21.0),
      make_finding("graphics.fb_compression.block_px", 16.0, "px", 0.7, {}, {},
                   {"graphics.fb_compression.rendered", "graphics.fb_compression.storage"}),
      make_finding("graphics.transaction_elimination", false, "", 0.6, {}, {},
                   {"graphics.transaction_elimination"}),
  };
  return r;
}

}  // namespace gpuscope::test
