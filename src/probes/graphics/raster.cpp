// Probe `raster`: the order in which the rasteriser shades a render pass
// (the triangle-bin test): every fragment takes a ticket from an atomic
// counter and records it at its pixel (GraphicsFacet::trace_raster).
//
// Several full-screen rectangles a pass, so that on a binning GPU the later
// ones' fragments part one tile from the next even where the walk runs on
// seamlessly (the tile below shaded right after the one above), and the
// gap between a pixel's first two tickets tells binning from immediate.
// - graphics.raster.order: 4 rectangles on a 512x256 target, every pixel
//   recorded (8x4 tiles of 64 px, 32x16 of 16 px);
// - graphics.raster.order_wide: only where that target shows fewer than 3
//   tile boundaries along an axis (bins of hundreds of pixels): 2 rectangles
//   on a 2048x2048 target (within the device's limits), every 8th pixel
//   along each axis.
// Series: the first two rectangles' fields; x the cell (rectangle, then
// row, then column), y its ticket
// (4294967295 where none was recorded); meta width, height, stride,
// cells_x, cells_y, rects (kept), rects_drawn, tickets. Each trace is checked: every recorded
// pixel shaded by both rectangles, no ticket twice or beyond those taken, the
// tickets taken (and the device's fragment count, where it keeps one) one
// per pixel and rectangle, give or take helper invocations and MSAA's
// pixels shaded once per triangle on an edge.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

namespace {

// A target shows a tile along an axis well when it holds this many tile
// boundaries along it.
constexpr uint32_t kWantBoundaries = 3;

// The series of a trace's first two rectangles (what the findings read).
Series trace_series(const char* id, const PassDesc& pass, const RasterTrace& t) {
  Series s = make_series(id, "raster", {"cell", ""}, {"ticket", ""});
  const uint32_t kept = std::min(pass.rects, 2u);
  const size_t n = size_t{t.cells_x} * t.cells_y * kept;
  s.points.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const double y = t.ticket[k];
    s.points.push_back({static_cast<double>(k), y, {y}});
  }
  s.meta = {{"width", pass.width},
            {"height", pass.height},
            {"stride", t.stride},
            {"cells_x", t.cells_x},
            {"cells_y", t.cells_y},
            {"rects", kept},
            {"rects_drawn", pass.rects},
            {"tickets", t.tickets},
            {"pass_ns", t.timing.ns},
            {"format", "rgba8"},
            {"shader", "each fragment takes a ticket from one atomic counter; the lowest at each recorded pixel "
                       "and rectangle is kept"}};
  if (t.timing.fragments) s.meta["fragments_counted"] = *t.timing.fragments;
  return s;
}

// Traces `pass` at `stride` into a checked series.
Series trace(ProbeContext& ctx, GraphicsFacet& g, const char* id, const PassDesc& pass, uint32_t stride) {
  const RasterTrace t = g.trace_raster(pass, stride);
  graphics_probe::check_trace(t, pass, "raster");
  ctx.progress(fmt::format("raster {}: {}x{} every {} px, {} tickets in {:.2f} ms", id, pass.width, pass.height,
                           stride, t.tickets, t.timing.ns / 1e6));
  return trace_series(id, pass, t);
}

}  // namespace

std::vector<Series> run_raster_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "raster");
  const GraphicsLimits l = g.graphics_limits();
  if (!l.fragment_side_effects)
    throw Unsupported(
        "fragment shaders cannot write storage buffers or use atomics on this device, so "
        "no fragment can record its ticket");
  PassDesc pass;
  pass.width = std::min(512u, l.max_width);
  pass.height = std::min(256u, l.max_height);
  pass.colour = {PixelFormat::kRgba8};
  pass.rects = 4;
  std::vector<Series> out;
  out.push_back(trace(ctx, g, analysis::kRasterOrderSeries, pass, 1));
  ctx.progress_fraction(0.5);

  const analysis::TileReading r = analysis::read_tiles(analysis::series_field(out.back(), 0));
  const auto shown = [](const analysis::TileAxis& a) { return a.found && a.boundaries >= kWantBoundaries; };
  if (shown(r.width) && shown(r.height)) return out;
  PassDesc wide = pass;
  wide.rects = 2;
  wide.width = std::min(2048u, l.max_width);
  wide.height = std::min(2048u, l.max_height);
  if (wide.width > pass.width || wide.height > pass.height) {
    try {
      out.push_back(trace(ctx, g, analysis::kRasterWideSeries, wide, 8));
    } catch (const OutOfResources& e) {
      out.front().meta["wide_not_traced"] = e.what();
    }
  }
  return out;
}

}  // namespace gpuscope
