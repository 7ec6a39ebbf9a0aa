// Probe `raster`: the order in which the rasteriser shades a render pass
// (the triangle-bin test): every fragment takes a ticket from an atomic
// counter and records its pixel (GraphicsFacet::trace_raster).
//
// - graphics.raster.order: one full-screen rectangle on a 512x256 target
//   (8x4 tiles of 64 px, 32x16 of 16 px), every fragment recorded: x the
//   ticket, y the pixel x + y * width. The tile's width and height and the
//   walk between tiles are read from it (analysis/graphics.hpp).
// - graphics.raster.binning: two rectangles; the first width x height
//   tickets recorded (half of all: enough to see whether rectangle 1 starts
//   before rectangle 0 has covered the screen): x the ticket, y the
//   rectangle.
// Each trace is checked: every ticket taken (one per pixel and rectangle),
// every pixel recorded once per rectangle, the device's fragment count where
// it keeps one.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

namespace {

// Checks a trace of `pass` recording the first `recorded` tickets.
void check_trace(const RasterTrace& t, const PassDesc& pass, uint64_t recorded) {
  const uint64_t pixels = uint64_t{pass.width} * pass.height;
  const uint64_t want = pixels * pass.rects;
  if (t.tickets != want)
    throw ValidationError(
        fmt::format("raster: {} tickets taken in a pass of {}x{} px x {} rectangles, expected {}", t.tickets,
                    pass.width, pass.height, pass.rects, want));
  graphics_probe::check_counted(t.timing.fragments, pass, true, "raster");
  const uint64_t n = std::min(recorded, want);
  if (t.pixel.size() != n || t.rect.size() != n)
    throw ValidationError(fmt::format("raster: {} pixels and {} rectangles recorded, expected {} of each",
                                      t.pixel.size(), t.rect.size(), n));
  // Each (pixel, rectangle) at most once; all of them when all were recorded.
  std::vector<uint8_t> seen(pixels * pass.rects, 0);
  for (uint64_t k = 0; k < n; ++k) {
    if (t.pixel[k] >= pixels || t.rect[k] >= pass.rects)
      throw ValidationError(fmt::format(
          "raster: ticket {} recorded pixel {} of rectangle {}, outside the pass", k, t.pixel[k], t.rect[k]));
    uint8_t& s = seen[uint64_t{t.rect[k]} * pixels + t.pixel[k]];
    if (s)
      throw ValidationError(
          fmt::format("raster: pixel {} of rectangle {} shaded twice (ticket {})", t.pixel[k], t.rect[k], k));
    s = 1;
  }
}

Series trace_series(const char* id, const char* y_name, const std::vector<uint32_t>& ys, const PassDesc& pass,
                    const RasterTrace& t) {
  Series s = make_series(id, "raster", {"ticket", ""}, {y_name, ""});
  s.points.reserve(ys.size());
  for (size_t k = 0; k < ys.size(); ++k) {
    const double y = ys[k];
    s.points.push_back({static_cast<double>(k), y, {y}});
  }
  s.meta = {
      {"width", pass.width},
      {"height", pass.height},
      {"rects", pass.rects},
      {"tickets", t.tickets},
      {"recorded", ys.size()},
      {"pass_ns", t.timing.ns},
      {"format", "rgba8"},
      {"shader", "each fragment takes a ticket from one atomic counter and records its pixel and rectangle"}};
  if (t.timing.fragments) s.meta["fragments_counted"] = *t.timing.fragments;
  return s;
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
  std::vector<Series> out;

  const uint32_t pixels = pass.width * pass.height;
  const RasterTrace order = g.trace_raster(pass, pixels);
  check_trace(order, pass, pixels);
  out.push_back(trace_series(analysis::kRasterOrderSeries, "pixel", order.pixel, pass, order));
  ctx.progress(fmt::format("raster order: {}x{}, {} tickets in {:.2f} ms", pass.width, pass.height,
                           order.tickets, order.timing.ns / 1e6));
  ctx.progress_fraction(0.5);

  pass.rects = 2;
  const RasterTrace bins = g.trace_raster(pass, pixels);
  check_trace(bins, pass, pixels);
  out.push_back(trace_series(analysis::kRasterBinningSeries, "rectangle", bins.rect, pass, bins));
  uint64_t later = 0;
  for (uint32_t k = 0; k < pixels / 2; ++k) later += bins.rect[k] > 0 ? 1 : 0;
  ctx.progress(fmt::format("raster binning: {:.1f}% of the first half screen's tickets from rectangle 1",
                           100.0 * static_cast<double>(later) / (pixels / 2)));
  return out;
}

}  // namespace gpuscope
