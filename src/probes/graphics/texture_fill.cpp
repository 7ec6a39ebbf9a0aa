// Probe `texfill`: texture fill rate by filter, from a texture small enough
// to stay in the texture cache (64 px a side, 16 KiB plus its mips).
//
// graphics.texture.<filter> (point, bilinear, trilinear, aniso): x the
// texture's side in px, y Gtexel/s: filtered samples (fragments x samples
// per fragment) per pass ns, every pass a sample. Passes draw blended
// rectangles (so that no fragment is dropped as hidden), 16 samples per
// fragment so that the texture units, not the ROPs, bound the pass, with
// rectangles sized as rop sizes them (rects_for_fill) and timed after as
// many passes untimed (timed_fill). The device's fragment count, where it
// keeps one, must be every pixel of every rectangle; the read-back's colour
// is the mean of texels whose values are the backend's, so only its size
// is checked.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

std::vector<Series> run_texfill_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "texfill");
  const GraphicsLimits l = g.graphics_limits();
  if (!graphics_probe::has_format(l, PixelFormat::kRgba8))
    throw Unsupported("the device cannot render into RGBA8");
  constexpr uint32_t kTexturePx = 64;
  constexpr uint32_t kSamples = 16;
  const uint32_t side = graphics_probe::fill_side(ctx, l);
  std::vector<TextureFilter> filters = {TextureFilter::kPoint, TextureFilter::kBilinear,
                                        TextureFilter::kTrilinear};
  std::string no_aniso;
  if (l.max_anisotropy >= 2)
    filters.push_back(TextureFilter::kAniso);
  else
    no_aniso = "aniso: the device has no anisotropic filtering";

  std::vector<Series> out;
  std::vector<std::string> missing;
  if (!no_aniso.empty()) missing.push_back(no_aniso);
  for (size_t i = 0; i < filters.size(); ++i) {
    PassDesc pass;
    pass.width = side;
    pass.height = side;
    pass.colour = {PixelFormat::kRgba8};
    pass.blend = true;
    Shading sh;
    sh.textured = true;
    sh.filter = filters[i];
    sh.texture_px = kTexturePx;
    sh.texture_samples = kSamples;
    const std::string id = fmt::format("{}{}", analysis::kTextureFillSeriesPrefix, filter_name(filters[i]));
    try {
      pass.rects = graphics_probe::rects_for_fill(g, pass, sh, graphics_probe::target_pass_ns(ctx));
      const FillResult r = graphics_probe::timed_fill(g, pass, sh, graphics_probe::passes_per_point(ctx));
      const size_t want_bytes = size_t{side} * side * pixel_bytes(PixelFormat::kRgba8);
      if (r.pixels.size() != want_bytes)
        throw ValidationError(
            fmt::format("texfill: read-back of {} bytes, expected {}", r.pixels.size(), want_bytes));
      const double fragments = graphics_probe::check_fragments(r, pass, sh, "texfill");
      const double texels_per_pass = static_cast<double>(side) * side * pass.rects * kSamples;
      Series s = make_series(id, "texfill", {"texture side", "px"}, {"texture fill rate", "Gtexel/s"});
      std::vector<double> rates;
      for (const PassTiming& t : r.passes) rates.push_back(texels_per_pass / t.ns);
      const double y = add_point(s, kTexturePx, rates);
      s.meta = {{"width", side},
                {"height", side},
                {"rects", pass.rects},
                {"samples_per_fragment", kSamples},
                {"filter", std::string(filter_name(filters[i]))},
                {"texture", "RGBA8, mipmapped, 64 px a side"},
                {"fragments_counted", fragments >= 0 ? nlohmann::json(fragments) : nlohmann::json(false)}};
      if (filters[i] == TextureFilter::kAniso) s.meta["max_anisotropy"] = std::min(16.0f, l.max_anisotropy);
      out.push_back(std::move(s));
      ctx.progress(fmt::format("texfill {:<10} {:>4} rects  {:8.2f} Gtexel/s", filter_name(filters[i]),
                               pass.rects, y));
    } catch (const Unsupported& e) {
      missing.push_back(fmt::format("{}: {}", filter_name(filters[i]), e.what()));
    }
    ctx.progress_fraction(static_cast<double>(i + 1) / static_cast<double>(filters.size()));
  }
  if (out.empty())
    throw Unsupported("no filter could be measured: " + fmt::format("{}", fmt::join(missing, "; ")));
  if (!missing.empty()) out.front().meta["not_measured"] = missing;
  return out;
}

}  // namespace gpuscope
