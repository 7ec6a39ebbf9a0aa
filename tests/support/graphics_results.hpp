// A run with every graphics series and finding of issue 15's contract
// (docs/results-format.md), made up for the reports' tests: a raster trace
// as llvmpipe gives one (64 x 64 px tiles walked row-major, four threads
// taking a tile each, their fragments interleaved), a binning trace, the
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
  uint64_t max_tickets = 200000;       // tickets recorded; the rest of the pixels stay unrecorded
};

// The order a tiled rasteriser shades pixels in: tiles taken row-major by
// `threads` workers, each shading its tile row by row, the workers taking
// turns pixel by pixel. Pixel index x + y * width, by ticket.
inline std::vector<uint32_t> tiled_raster_order(const GraphicsRunShape& s) {
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
  std::vector<uint32_t> order;
  struct Worker {
    size_t tile, next;
  };
  std::vector<Worker> workers;
  size_t next_tile = 0;
  while (workers.size() < s.threads && next_tile < tiles.size()) workers.push_back({next_tile++, 0});
  while (!workers.empty()) {
    for (size_t w = 0; w < workers.size();) {
      Worker& k = workers[w];
      order.push_back(tiles[k.tile][k.next++]);
      if (k.next == tiles[k.tile].size()) {
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

  Series order = graphics_series("graphics.raster.order", "raster", {"ticket", ""}, {"pixel index", ""});
  const auto pixels = tiled_raster_order(shape);
  for (uint64_t t = 0; t < pixels.size() && t < shape.max_tickets; ++t)
    order.points.push_back(
        {static_cast<double>(t), static_cast<double>(pixels[t]), {static_cast<double>(pixels[t])}});
  order.meta = {{"width", shape.width}, {"height", shape.height}, {"tickets", pixels.size()}};
  r.series.push_back(order);

  // Binning: 4 rectangles over 16 tiles of 256 fragments, each tile's rectangles in turn.
  Series binning = graphics_series("graphics.raster.binning", "raster", {"ticket", ""}, {"rectangle", ""});
  for (uint32_t t = 0; t < 16 * 4 * 256; ++t)
    binning.points.push_back({double(t), double((t / 256) % 4), {double((t / 256) % 4)}});
  binning.meta = {{"width", 64}, {"height", 64}, {"rects", 4}};
  r.series.push_back(binning);

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
      make_finding("graphics.binning", true, "", 0.8, {}, {}, {"graphics.raster.binning"}),
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
