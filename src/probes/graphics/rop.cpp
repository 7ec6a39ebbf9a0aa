// Probe `rop`: fill rate by attachment format, blending off and on.
//
// graphics.rop.<format>[.blend]: x the framebuffer's pixels, y Gpixel/s
// (framebuffer pixels x rectangles per pass ns), every pass a sample. A
// pass draws full-screen flat rectangles over each other. A new colour
// alone does not keep a tiler from dropping the covered ones: Mali's
// forward pixel kill drops any fragment a later opaque fragment covers,
// whatever it writes. So every case shades with Shading::may_discard (a
// discard whose condition is never true): no fragment is known opaque
// before it runs, and every rectangle's fragments reach the ROPs, blended
// or not (one shader per format; the cases differ in blending alone). The
// device's fragment count, where it keeps one, must be every pixel of every
// rectangle (meta fragments_counted). Rectangles per pass are sized from a
// one-rectangle pass to about 5 ms, and further until the pass's fixed
// costs no longer weigh (rects_for_fill; at most 255, which keeps RGBA8
// blend sums exact), and timed after as many passes untimed (timed_fill).
// The last pass's attachment is read back and checked
// against flat_colour's last rectangle or the blend sum.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

std::vector<Series> run_rop_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "rop");
  const GraphicsLimits l = g.graphics_limits();
  const uint32_t side = graphics_probe::fill_side(ctx, l);
  struct Case {
    PixelFormat format;
    bool blend;
  };
  std::vector<Case> cases;
  std::vector<std::string> missing;
  for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f}) {
    if (!graphics_probe::has_format(l, f)) {
      missing.emplace_back(format_name(f));
      continue;
    }
    cases.push_back({f, false});
    cases.push_back({f, true});
  }
  if (l.depth)
    cases.push_back({PixelFormat::kDepth32f, false});
  else
    missing.emplace_back("depth32f");
  if (cases.empty()) throw Unsupported("the device renders into none of rgba8, rgba16f, rgba32f, depth32f");

  Shading flat;
  flat.may_discard = true;
  std::vector<Series> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    PassDesc pass;
    pass.width = side;
    pass.height = side;
    pass.blend = c.blend;
    if (c.format == PixelFormat::kDepth32f) {
      pass.colour.clear();
      pass.depth = true;
    } else {
      pass.colour = {c.format};
    }
    const std::string id =
        fmt::format("{}{}{}", analysis::kRopSeriesPrefix, format_name(c.format), c.blend ? ".blend" : "");
    try {
      pass.rects = graphics_probe::rects_for_fill(g, pass, flat, graphics_probe::target_pass_ns(ctx));
      const FillResult r = graphics_probe::timed_fill(g, pass, flat, graphics_probe::passes_per_point(ctx));
      graphics_probe::check_flat_read_back(r, pass, "rop");
      const double fragments = graphics_probe::check_fragments(r, pass, flat, "rop");
      Series s = make_series(id, "rop", {"framebuffer", "px"}, {"fill rate", "Gpixel/s"});
      std::vector<double> rates;
      for (const PassTiming& t : r.passes)
        rates.push_back(static_cast<double>(side) * side * pass.rects / t.ns);
      const double y = add_point(s, static_cast<double>(side) * side, rates);
      s.meta = {{"width", side},
                {"height", side},
                {"rects", pass.rects},
                {"blend", c.blend},
                {"format", std::string(format_name(c.format))},
                {"fragments_counted", fragments >= 0 ? nlohmann::json(fragments) : nlohmann::json(false)},
                {"fragments_drawn", static_cast<double>(side) * side * pass.rects}};
      out.push_back(std::move(s));
      ctx.progress(fmt::format("rop {:<22} {:>4} rects  {:8.2f} Gpixel/s", id, pass.rects, y));
    } catch (const Unsupported& e) {
      missing.push_back(fmt::format("{} ({})", id, e.what()));
    }
    ctx.progress_fraction(static_cast<double>(i + 1) / static_cast<double>(cases.size()));
  }
  if (out.empty())
    throw Unsupported("no format could be filled: " + fmt::format("{}", fmt::join(missing, "; ")));
  if (!missing.empty()) out.front().meta["not_measured"] = missing;
  return out;
}

}  // namespace gpuscope
