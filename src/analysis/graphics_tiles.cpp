// The tile's findings: width, height and walk from the order trace, binning
// from the binning trace, tile memory from the tile_memory series.
#include "analysis/graphics.hpp"

#include "analysis/unfound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

namespace {

Finding make(const std::string& id, FindingValue value, const std::string& unit, double confidence,
             const std::vector<std::string>& evidence, const std::string& method, const std::string& note) {
  Finding f;
  f.id = id;
  f.value = std::move(value);
  f.unit = unit;
  f.confidence = std::clamp(confidence, 0.0, 1.0);
  f.evidence = evidence;
  f.method = method;
  f.note = note;
  return f;
}

// The trace's points (x ticket, y value) as a vector by ticket; points
// whose ticket is not the next one end it (a trace has every ticket from 0).
std::vector<uint32_t> by_ticket(const Series& s) {
  std::vector<uint32_t> out;
  out.reserve(s.points.size());
  for (const Point& p : s.points) {
    if (p.x != static_cast<double>(out.size()) || p.y >= 4294967295.0) break;
    out.push_back(static_cast<uint32_t>(p.y));
  }
  return out;
}

uint32_t meta_u32(const Series& s, const char* key) {
  if (!s.meta.contains(key) || !s.meta[key].is_number()) return 0;
  const double v = s.meta[key].get<double>();
  return v > 0 && v < 65536.0 * 65536 ? static_cast<uint32_t>(v) : 0;
}

constexpr const char* kTileMethod =
    "A one-rectangle pass whose fragments each take a ticket from an atomic counter; along each axis, the "
    "median ticket step between neighbouring pixels over all rows (columns) per position. Boundaries: the "
    "positions whose step stands out 5x or more from smaller ones, or where time does not run forward in "
    "nearly every row (tiles shaded at once by several workers); the tile is the largest period whose "
    "multiples (and only they) are boundaries with time running forward everywhere inside its cells.";

}  // namespace

std::vector<Finding> raster_findings(const Series* order, const Series* binning) {
  std::vector<Finding> out;
  bool tile_found = false;
  if (order) {
    const uint32_t w = meta_u32(*order, "width"), h = meta_u32(*order, "height");
    const std::vector<std::string> ev = {order->id};
    if (w == 0 || h == 0) {
      for (const char* id : {"graphics.tile.width_px", "graphics.tile.height_px", "graphics.tile.order"})
        note_unfound(id, "the order trace's meta lacks its target's width and height", ev);
    } else {
      const TileReading r = read_tiles(ticket_field(by_ticket(*order), w, h));
      const auto axis = [&](const TileAxis& a, const char* id) {
        if (!a.found) {
          note_unfound(id, a.reason, ev);
          return;
        }
        std::string note = fmt::format(
            "{} boundaries inside the {}x{} target; their steps stand {:.1f}x above those inside tiles.",
            a.boundaries, w, h, a.separation);
        if (!a.reason.empty()) note += " " + a.reason + ".";
        out.push_back(make(id, static_cast<double>(a.size_px), "px", a.confidence, ev, kTileMethod, note));
      };
      axis(r.width, "graphics.tile.width_px");
      axis(r.height, "graphics.tile.height_px");
      tile_found = r.width.found && r.height.found;
      if (!r.order.empty()) {
        out.push_back(
            make("graphics.tile.order", r.order, "", r.order_confidence, ev,
                 "Tiles ordered by their median ticket, against row-major, column-major, serpentine, "
                 "Morton and Hilbert walks over the tile grid (either orientation): the walk with the "
                 "highest Kendall tau, named when it reaches 0.75 and the next disagrees twice as "
                 "often (plus 3% of pairs); 'other' when none reaches 0.4.",
                 fmt::format("Kendall tau {:.2f} over {} x {} tiles. {}", r.order_tau, r.tiles_x, r.tiles_y,
                             r.order_reason)));
      } else {
        note_unfound("graphics.tile.order", r.order_reason, ev);
      }
    }
  }
  if (binning) {
    const uint32_t w = meta_u32(*binning, "width"), h = meta_u32(*binning, "height");
    const BinningReading b = read_binning(by_ticket(*binning), uint64_t{w} * h, tile_found);
    if (!b.decided) {
      note_unfound("graphics.binning", b.reason, {binning->id});
    } else {
      out.push_back(make(
          "graphics.binning", b.binned, "", b.confidence, {binning->id},
          "A pass of two full-screen rectangles, each fragment taking a ticket: binned when 20% or more of "
          "the first half screen's worth of tickets belong to rectangle 1 (each tile finishes both before "
          "the next), immediate when at most 2% do (rectangle 0 covers the screen first).",
          fmt::format("{:.1f}% of the first {} tickets belong to rectangle 1.{}", 100 * b.later_fraction,
                      uint64_t{w} * h / 2, b.reason.empty() ? "" : " " + b.reason + ".")));
    }
  }
  return out;
}

std::vector<Finding> tile_memory_findings(const Series& s) {
  const std::vector<std::string> ev = {s.id};
  const char* id = "graphics.tile.memory_bytes";
  if (s.points.size() < 2) {
    note_unfound(
        id,
        fmt::format("{} bytes-per-pixel point(s) with a tile read; at least 2 are needed", s.points.size()),
        ev);
    return {};
  }
  double largest = 0;
  for (const Point& p : s.points) largest = std::max(largest, p.y);
  // Shrunk: clearly smaller than the largest tile seen (tile sizes step by
  // halves or more, never by a few percent).
  double memory = 0;
  int shrunk = 0;
  double first_shrunk_bpp = 0, last_full_bpp = 0, lo_product = 1e300, hi_product = 0;
  for (const Point& p : s.points) {
    if (p.y < 0.8 * largest) {
      if (!shrunk) first_shrunk_bpp = p.x;
      ++shrunk;
      const double product = p.x * p.y;
      lo_product = std::min(lo_product, product);
      hi_product = std::max(hi_product, product);
      memory = std::max(memory, product);
    } else if (!shrunk) {
      last_full_bpp = p.x;
    }
  }
  if (shrunk == 0) {
    note_unfound(
        id,
        fmt::format("the tile kept {:.0f} px up to {:.0f} bytes per pixel: no knee, so the tile memory "
                    "(if the tile is held on chip at all) is at least {:.0f} B",
                    largest, s.points.back().x, largest * s.points.back().x),
        ev);
    return {};
  }
  // Past the knee every shrunk tile times its bytes per pixel should come to
  // about the same memory (tiles snap down to aligned sizes, so below it).
  const double spread = hi_product / lo_product;
  double confidence = shrunk >= 2 ? (spread <= 1.3 ? 0.85 : 0.55) : 0.6;
  std::string note = fmt::format(
      "The tile is {:.0f} px up to {:.0f} B per pixel and shrinks from {:.0f} B per pixel; {} shrunk tile(s) "
      "hold {:.0f} to {:.0f} B.",
      largest, last_full_bpp, first_shrunk_bpp, shrunk, lo_product, hi_product);
  if (spread > 1.3) note += " The shrunk tiles' sizes do not come to one memory: read it as rough.";
  Finding f =
      make(id, memory, "B", confidence, ev,
           "Tile pixels read from a raster trace at each bytes per pixel (colour attachments, formats, "
           "MSAA); past the knee where the tile shrinks, the largest tile pixels x bytes per pixel.",
           note);
  // The full tile fitted at the last bytes per pixel before the knee.
  if (last_full_bpp > 0) memory = std::max(memory, largest * last_full_bpp);
  f.value = memory;
  f.low = memory;
  f.high = largest * first_shrunk_bpp;
  if (*f.high < *f.low) f.high.reset();
  return {f};
}

}  // namespace gpuscope::analysis
