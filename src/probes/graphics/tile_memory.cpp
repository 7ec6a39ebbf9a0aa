// Probe `tilemem`: how the tile shrinks as each pixel needs more bytes. A
// tiler keeps a tile's attachments in on-chip tile memory; more or wider
// colour attachments and MSAA make each pixel larger, and past the knee the
// tile holds fewer pixels: tile pixels x bytes per pixel is then the tile
// memory (analysis/graphics.hpp).
//
// graphics.tile_memory: x bytes per pixel (PassDesc::bytes_per_pixel), y the
// tile's pixels as read from the first rectangle of an 8-rectangle raster
// trace of that pass (analysis::read_tiles), one sample. meta.points has, per pass tried, the
// tile's width and height, the attachments and samples, and why a pass gave
// no point (unsupported, or no tile read from its trace).
//
// Bytes per pixel step by powers of two (4 .. 1024): RGBA8, RGBA16F,
// RGBA32F, then 2, 4, 8 RGBA32F attachments, then 4 and 8 samples of 4 or 8
// of them, as the device allows.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

namespace {

struct Layout {
  std::vector<PixelFormat> colour;
  uint32_t samples = 1;
};

std::vector<Layout> layouts(const GraphicsLimits& l) {
  using graphics_probe::has_format;
  using graphics_probe::has_samples;
  std::vector<Layout> out;
  for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f})
    if (has_format(l, f)) out.push_back({{f}, 1});
  if (!has_format(l, PixelFormat::kRgba32f)) return out;
  for (uint32_t n : {2u, 4u, 8u})
    if (n <= l.max_colour_attachments) out.push_back({std::vector<PixelFormat>(n, PixelFormat::kRgba32f), 1});
  const uint32_t most = l.max_colour_attachments >= 8 ? 8 : 4;
  if (l.max_colour_attachments >= 4)
    for (uint32_t s : {4u, 8u}) {
      if (!has_samples(l, s)) continue;
      for (uint32_t n : {4u, 8u})
        if (n <= most && n * 16 * s > 128)
          out.push_back({std::vector<PixelFormat>(n, PixelFormat::kRgba32f), s});
    }
  return out;
}

}  // namespace

std::vector<Series> run_tilemem_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "tilemem");
  const GraphicsLimits l = g.graphics_limits();
  if (!l.fragment_side_effects)
    throw Unsupported("fragment shaders cannot use atomics on this device, so the tile cannot be traced");
  // Large enough for several tiles of a bin-sized tiler at its knee, small
  // enough for a CPU (llvmpipe's tiles are 64 px at every size).
  const bool cpu = graphics_probe::on_cpu(ctx);
  PassDesc pass;
  pass.width = std::min(cpu ? 512u : 1024u, l.max_width);
  pass.height = std::min(cpu ? 256u : 1024u, l.max_height);
  // On a binning GPU the later rectangles' fragments part one tile from the
  // next: the more of them, the more a boundary stands out from the steps
  // inside a tile, which matters for the few quad rows of a shrunk tile.
  pass.rects = 8;

  Series s = make_series(analysis::kTileMemorySeries, "tilemem", {"bytes per pixel", "B"}, {"tile", "px"});
  s.meta = {{"width", pass.width}, {"height", pass.height}, {"points", nlohmann::json::array()}};
  const auto plan = layouts(l);
  for (size_t i = 0; i < plan.size(); ++i) {
    pass.colour = plan[i].colour;
    pass.samples = plan[i].samples;
    nlohmann::json point = {{"bytes_per_pixel", pass.bytes_per_pixel()},
                            {"attachments", pass.colour.size()},
                            {"format", std::string(format_name(pass.colour.front()))},
                            {"samples", pass.samples}};
    try {
      const RasterTrace t = g.trace_raster(pass, 1);
      graphics_probe::check_trace(t, pass, "tilemem");
      analysis::TicketField field{t.cells_x, t.cells_y, t.stride, {}};
      field.ticket.assign(t.ticket.begin(), t.ticket.begin() + int64_t{t.cells_x} * t.cells_y);
      const analysis::TileReading r = analysis::read_tiles(field);
      point["width_px"] = r.width.found ? r.width.size_px : 0;
      point["height_px"] = r.height.found ? r.height.size_px : 0;
      if (r.width.found && r.height.found) {
        const double tile = static_cast<double>(r.width.size_px) * r.height.size_px;
        add_point(s, static_cast<double>(pass.bytes_per_pixel()), {tile}, tile);
        ctx.progress(fmt::format("tilemem {:>5} B/px: tile {}x{}", pass.bytes_per_pixel(), r.width.size_px,
                                 r.height.size_px));
      } else {
        point["no_tile"] = !r.width.found ? r.width.reason : r.height.reason;
      }
    } catch (const Unsupported& e) {
      point["skipped"] = e.what();
    } catch (const OutOfResources& e) {
      point["skipped"] = e.what();
    }
    s.meta["points"].push_back(point);
    ctx.progress_fraction(static_cast<double>(i + 1) / static_cast<double>(plan.size()));
  }
  return {s};
}

}  // namespace gpuscope
