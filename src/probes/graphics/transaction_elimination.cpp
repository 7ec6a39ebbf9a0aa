// Probe `txelim` (experimental): transaction elimination, a tiler's skipping
// of tile write-backs whose content has not changed (Mali keeps a signature
// per tile). Rendered noise frames are drawn again over identical content
// (the same seed: the image already holds it) and over changed content (two
// seeds taken in turn, so every frame differs from the one before).
//
// graphics.transaction_elimination: x 0 for identical redraws, 1 for
// changed ones; y the write pass's ns, every pass a sample. Every frame's
// read checksum must equal frame_checksum().
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

std::vector<Series> run_txelim_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "txelim");
  const GraphicsLimits l = g.graphics_limits();
  if (!graphics_probe::has_format(l, PixelFormat::kRgba8))
    throw Unsupported("the device cannot render into RGBA8");
  const uint32_t side =
      std::min({graphics_probe::small_frames(ctx) ? 512u : 2048u, l.max_width, l.max_height});
  FrameDesc a;
  a.width = side;
  a.height = side;
  a.pattern = FramePattern::kNoise;
  a.seed = 0xa11;
  FrameDesc b = a;
  b.seed = 0xb22;
  const uint64_t sum_a = graphics_probe::frame_checksum_by_blocks(a);
  const uint64_t sum_b = graphics_probe::frame_checksum_by_blocks(b);
  const auto draw = [&](const FrameDesc& f, uint64_t want) {
    const FrameTiming t = g.frame(f);
    if (t.checksum != want)
      throw ValidationError(fmt::format("txelim: a frame's read summed {}, expected {}", t.checksum, want));
    return t.write_ns;
  };
  const int passes = 2 * graphics_probe::passes_per_point(ctx);
  Series s = make_series(analysis::kTxElimSeries, "txelim", {"content changed", ""}, {"write", "ns"});
  s.meta = {{"width", side},
            {"height", side},
            {"pattern", "noise, RGBA8, rendered"},
            {"x", "0: the frame drawn again over identical content; 1: over the other seed's frame"},
            {"experimental", true}};
  // Interleaved, so that a drifting clock weighs on both alike.
  std::vector<double> same, changed;
  draw(a, sum_a);
  draw(a, sum_a);
  bool last_a = true;
  for (int p = 0; p < passes; ++p) {
    if (!last_a) draw(a, sum_a);  // back onto a's content, untimed
    same.push_back(draw(a, sum_a));
    changed.push_back(draw(b, sum_b));
    last_a = false;
    ctx.progress_fraction(static_cast<double>(p + 1) / passes);
  }
  const double y0 = add_point(s, 0, same);
  const double y1 = add_point(s, 1, changed);
  ctx.progress(fmt::format("txelim: identical redraw {:.1f} us, changed {:.1f} us (write passes)", y0 / 1e3,
                           y1 / 1e3));
  return {s};
}

}  // namespace gpuscope
