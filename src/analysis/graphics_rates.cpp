// Fill rates, framebuffer compression and transaction elimination, and the
// graphics findings' entry point.
#include "analysis/graphics.hpp"

#include "analysis/unfound.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

namespace {

double relative_spread(const Point& p) {
  if (p.samples.size() < 2 || p.y <= 0) return 0.05;
  return summarize(p.samples).rel_spread;
}

double sample_min(const Point& p) {
  return p.samples.empty() ? p.y : *std::min_element(p.samples.begin(), p.samples.end());
}
double sample_max(const Point& p) {
  return p.samples.empty() ? p.y : *std::max_element(p.samples.begin(), p.samples.end());
}

const Point* at_x(const Series& s, double x) {
  for (const Point& p : s.points)
    if (p.x == x) return &p;
  return nullptr;
}

// The highest point of a rate series as a finding, bounded by its samples.
Finding best_rate(const Series& s, const std::string& id, const std::string& unit,
                  const std::string& method) {
  const Point& best = *std::max_element(s.points.begin(), s.points.end(),
                                        [](const Point& a, const Point& b) { return a.y < b.y; });
  Finding f;
  f.id = id;
  f.value = best.y;
  f.unit = unit;
  f.low = sample_min(best);
  f.high = sample_max(best);
  const double spread = relative_spread(best);
  f.confidence = best.samples.size() < 3 ? 0.5 : spread <= 0.05 ? 0.85 : spread <= 0.15 ? 0.65 : 0.4;
  f.evidence = {s.id};
  f.method = method;
  return f;
}

std::string meta_text(const Series& s, const char* key) {
  if (!s.meta.contains(key)) return "?";
  return s.meta[key].dump();
}

}  // namespace

std::vector<Finding> fill_rate_findings(const Results& r) {
  std::vector<Finding> out;
  for (const Series& s : r.series) {
    if (s.points.empty()) continue;
    if (s.id.starts_with(kRopSeriesPrefix)) {
      Finding f = best_rate(
          s, s.id + ".gpixels", "Gpixel/s",
          "Full-framebuffer flat rectangles drawn over each other in one render pass, timed over whole "
          "passes: framebuffer pixels x rectangles per ns, the median of every pass; bounds: that point's "
          "sample min and max. Hidden-surface removal cannot drop the overdraw: the fragment shader holds a "
          "discard whose condition (a push constant) is never true, so no fragment is known opaque before it "
          "runs (a new colour alone would not stop Mali's forward pixel kill), and the device's fragment "
          "count, where it keeps one, must be every pixel of every rectangle.");
      f.note =
          fmt::format("{:.0f} px framebuffer, {} rectangle(s) a pass; fragments counted by the device: {}.",
                      s.points.front().x, meta_text(s, "rects"), meta_text(s, "fragments_counted"));
      out.push_back(std::move(f));
    } else if (s.id.starts_with(kTextureFillSeriesPrefix)) {
      Finding f = best_rate(
          s, s.id + ".gtexels", "Gtexel/s",
          "Full-framebuffer rectangles whose fragments each take several filtered samples of a small "
          "mipmapped RGBA8 texture (held in cache), timed over whole passes: filtered samples per ns, the "
          "median of every pass; bounds: that point's sample min and max.");
      f.note = fmt::format("{} samples per fragment.", meta_text(s, "samples_per_fragment"));
      if (r.device.clock_mhz > 0 && r.device.compute_units > 0)
        f.note += fmt::format(
            " {:.2f} texels per clock per core at the reported {} MHz over {} cores (the driver's clock, "
            "often "
            "the boost maximum).",
            number(f) * 1e3 / r.device.clock_mhz / r.device.compute_units, r.device.clock_mhz,
            r.device.compute_units);
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> fb_compression_findings(const Series& rendered, const Series* storage) {
  const char* id = "graphics.fb_compression.block_px";
  std::vector<std::string> ev = {rendered.id};
  if (storage) ev.push_back(storage->id);
  const Point* flat = at_x(rendered, 0);
  if (!flat || rendered.points.size() < 3) {
    note_unfound(id, "the rendered frames lack the flat frame or any block size", ev);
    return {};
  }
  const Point& noise = rendered.points.back();  // x = the frame's width: every pixel its own colour
  const double gain = flat->y / std::max(noise.y, 1e-12);
  const bool clear = sample_min(*flat) > sample_max(noise) && gain >= 1.15;
  if (!clear) {
    note_unfound(
        id,
        fmt::format("flat frames read at {:.3g} GB/s against noise's {:.3g} GB/s ({:.2f}x): no compression "
                    "visible in the read cost",
                    flat->y, noise.y, gain),
        ev);
    return {};
  }
  if (storage) {
    const Point* s_flat = at_x(*storage, 0);
    if (s_flat && !storage->points.empty()) {
      const double s_gain = s_flat->y / std::max(storage->points.back().y, 1e-12);
      if (s_gain >= 1 + 0.5 * (gain - 1)) {
        note_unfound(
            id,
            fmt::format("storage frames (never compressed) gain {:.2f}x from noise to flat, about as much "
                        "as rendered ones ({:.2f}x): the gain is not a compressor's",
                        s_gain, gain),
            ev);
        return {};
      }
    }
  }
  const double half = noise.y + 0.5 * (flat->y - noise.y);
  double block = 0, below = 0;
  for (const Point& p : rendered.points) {
    if (p.x == 0 || &p == &noise) continue;
    if (p.y >= half) {
      if (block == 0) block = p.x;
    } else {
      block = 0;  // a slower larger block undoes a faster smaller one
      below = p.x;
    }
  }
  if (block == 0) {
    note_unfound(
        id,
        fmt::format("only flat frames read faster ({:.2f}x noise's rate): the block is larger than the "
                    "largest block measured ({:.0f} px), or only constant frames compress",
                    gain, below),
        ev);
    return {};
  }
  Finding f;
  f.id = id;
  f.value = block;
  f.unit = "px";
  f.low = block;
  f.high = block;
  f.confidence = below > 0 && below * 2 == block ? 0.75 : 0.55;
  f.evidence = ev;
  f.method =
      "Frames of flat colour, N x N blocks of one colour (N = 1 .. 64, powers of 2) and noise, rendered (a "
      "colour attachment the driver may compress) and written through a storage image (not compressible), "
      "each then read by a compute pass: the smallest N whose rendered read rate is half way or more from "
      "noise's to flat's.";
  f.note = fmt::format(
      "Flat frames read {:.2f}x as fast as noise; blocks of {:.0f} px and more read at half that "
      "gain or above, {:.0f} px below it.",
      gain, block, below);
  return {f};
}

std::vector<Finding> transaction_elimination_findings(const Series& s) {
  const char* id = "graphics.transaction_elimination";
  const Point* same = at_x(s, 0);
  const Point* changed = at_x(s, 1);
  if (!same || !changed || changed->y <= 0) {
    note_unfound(id, "the series lacks the identical or the changed redraw", {s.id});
    return {};
  }
  const double ratio = same->y / changed->y;
  Finding f;
  f.id = id;
  f.unit = "";
  f.evidence = {s.id};
  f.method =
      "Experimental: a frame's write pass timed when it redraws the content the image already holds against "
      "when the content changes (same pattern, another seed): eliminated when identical redraws take at most "
      "0.8x as long and every sample lies below the changed ones; absent when they take 0.9x to 1.1x.";
  f.note = fmt::format("Identical redraws take {:.2f}x the changed ones' write time. Experimental.", ratio);
  if (ratio <= 0.8 && sample_max(*same) < sample_min(*changed)) {
    f.value = true;
    f.confidence = 0.6;
  } else if (ratio >= 0.9 && ratio <= 1.1) {
    f.value = false;
    f.confidence = 0.5;
  } else {
    note_unfound(id,
                 fmt::format("identical redraws take {:.2f}x the changed ones' write time: between the two "
                             "readings, or scattered",
                             ratio),
                 {s.id});
    return {};
  }
  return {f};
}

std::vector<Finding> graphics_findings(const Results& r) {
  std::vector<Finding> out;
  const auto add = [&out](std::vector<Finding> fs) { out.insert(out.end(), fs.begin(), fs.end()); };
  const Series* order = r.find_series(kRasterOrderSeries);
  const Series* wide = r.find_series(kRasterWideSeries);
  if (order || wide) add(raster_findings(order, wide));
  if (const Series* s = r.find_series(kTileMemorySeries)) {
    const auto binning = std::find_if(out.begin(), out.end(), [](const Finding& f) { return f.id == "graphics.binning"; });
    add(tile_memory_findings(*s, binning == out.end() ? nullptr : &*binning));
  }
  add(fill_rate_findings(r));
  if (const Series* s = r.find_series(kFbRenderedSeries))
    add(fb_compression_findings(*s, r.find_series(kFbStorageSeries)));
  if (const Series* s = r.find_series(kTxElimSeries)) add(transaction_elimination_findings(*s));
  return out;
}

}  // namespace gpuscope::analysis
