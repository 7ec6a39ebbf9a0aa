// The tile's findings: width, height and walk from the order trace, binning
// from the binning trace, tile memory from the tile_memory series.
#include "analysis/graphics.hpp"

#include "analysis/unfound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

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
    "multiples (and only they) are boundaries, or where time does not run forward at three of its multiples "
    "or more and its other multiples outrank every step inside its cells, with time running forward "
    "everywhere inside its cells, and "
    "at least 4 px (2x2 quads step apart in every order). Read from the first of several full-screen "
    "rectangles drawn in one pass, so on a binning GPU the others' fragments part one tile from the next.";

}  // namespace

TicketField series_field(const Series& trace, uint32_t rect, std::string* why) {
  TicketField f;
  const uint32_t cx = meta_u32(trace, "cells_x"), cy = meta_u32(trace, "cells_y");
  const uint32_t stride = meta_u32(trace, "stride"), rects = meta_u32(trace, "rects");
  const auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return TicketField{};
  };
  if (cx == 0 || cy == 0 || stride == 0 || rects == 0)
    return fail(fmt::format("{} lacks the field's cells_x, cells_y, stride and rects (a trace by ticket, as "
                            "gpuscope wrote before fields: rerun the raster probe)",
                            trace.id));
  if (rect >= rects) return fail(fmt::format("{} holds {} rectangle(s), not rectangle {}", trace.id, rects, rect));
  const uint64_t cells = uint64_t{cx} * cy;  // below 2^64: each factor is below 2^32
  // Compared by division: cells x rects may not fit in 64 bits.
  if (cells > trace.points.size() || trace.points.size() % cells != 0 || trace.points.size() / cells != rects)
    return fail(fmt::format("{} holds {} points for {} x {} cells x {} rectangles", trace.id, trace.points.size(),
                            cx, cy, rects));
  f.width = cx;
  f.height = cy;
  f.stride = stride;
  f.ticket.resize(cells);
  for (size_t c = 0; c < cells; ++c) {
    const double y = trace.points[rect * cells + c].y;
    f.ticket[c] = y >= 0 && y < TicketField::kNoTicket ? static_cast<uint32_t>(y) : TicketField::kNoTicket;
  }
  return f;
}

namespace {

constexpr const char* kAxisIds[] = {"graphics.tile.width_px", "graphics.tile.height_px"};
constexpr const TileAxis TileReading::* kAxes[] = {&TileReading::width, &TileReading::height};

// A raster trace read: its first two rectangles' tickets and the tiles read
// off the first.
struct Trace {
  const Series* s = nullptr;
  TicketField first, second;
  TileReading tiles;
};

// Both axes from one trace where one shows both: the first (every pixel)
// where it holds 3 or more tile boundaries along each, else the wide one
// where it holds 2 or more (one may be a tile shaded out of order). A tile
// taken from two traces could pair a block inside a large bin (4x4 stamps,
// quads), seen along one axis of the small target, with the bin seen along
// the other. Else each axis from the trace with more tile boundaries along
// it.
const Trace* trace_for_axis(const std::vector<Trace>& traces, const TileAxis TileReading::* axis) {
  const auto both = [](const Trace& t, uint32_t least) {
    return t.tiles.width.found && t.tiles.height.found && t.tiles.width.boundaries >= least &&
           t.tiles.height.boundaries >= least;
  };
  if (both(traces.front(), 3)) return &traces.front();
  if (traces.size() > 1 && both(traces.back(), 2)) return &traces.back();
  const Trace* best = nullptr;
  for (const Trace& t : traces) {
    const TileAxis& a = t.tiles.*axis;
    if (a.found && (!best || a.boundaries > (best->tiles.*axis).boundaries)) best = &t;
  }
  return best;
}

// graphics.tile.width_px and .height_px from the traces `along` names;
// an axis left unfound clears its entry.
void tile_axis_findings(const std::vector<Trace>& traces, const Trace* along[2], std::vector<Finding>& out) {
  const auto& axis_ids = kAxisIds;
  const auto& members = kAxes;
  for (int a = 0; a < 2; ++a) {
    if (!along[a]) {
      // The reason from the widest trace: it saw the most of the target.
      const Trace& t = traces.back();
      note_unfound(axis_ids[a], (t.tiles.*members[a]).reason, {t.s->id});
      continue;
    }
    const Trace& t = *along[a];
    const TileAxis& x = t.tiles.*members[a];
    const uint32_t w = t.first.width * t.first.stride, h = t.first.height * t.first.stride;
    std::string note = fmt::format(
        "{} boundaries inside the {}x{} target{}; their steps stand {:.1f}x above those inside tiles.",
        x.boundaries, w, h, t.first.stride > 1 ? fmt::format(" (every {}th pixel recorded)", t.first.stride) : "",
        x.separation);
    if (!x.reason.empty()) note += " " + x.reason + ".";
    // A side 16x or more shorter than the other is a block inside a larger
    // tile (stamps, quad rows, the blocks one worker steps through while
    // another shades the next tile), not a tile's side.
    if (along[1 - a]) {
      const uint32_t other = (along[1 - a]->tiles.*members[1 - a]).size_px;
      if (other >= 16 * x.size_px) {
        note_unfound(
            axis_ids[a],
            fmt::format("the steps along {} stand out every {} px, but the other side is {} px: a side "
                        "this much shorter is a block inside a larger tile",
                        a == 0 ? "x" : "y", x.size_px, other),
            {t.s->id});
        along[a] = nullptr;
        continue;
      }
    }
    out.push_back(
        make(axis_ids[a], static_cast<double>(x.size_px), "px", x.confidence, {t.s->id}, kTileMethod, note));
  }
}

// graphics.tile.order: from the trace both axes came from, or read again
// on the widest trace with the sizes found.
void walk_finding(const std::vector<Trace>& traces, const Trace* const along[2], std::vector<Finding>& out) {
  if (!along[0] || !along[1]) {
    note_unfound("graphics.tile.order", "the walk between tiles needs the tile's width and height",
                 {traces.back().s->id});
    return;
  }
  const Trace* walked = along[0] == along[1] ? along[0] : &traces.back();
  TileReading walk = walked->tiles;
  if (walked != along[0] || walked != along[1]) {
    walk.width = along[0]->tiles.width;
    walk.height = along[1]->tiles.height;
    walk.order.clear();
    read_walk(walked->first, walk);
  }
  if (walk.order.empty()) {
    note_unfound("graphics.tile.order", walk.order_reason, {walked->s->id});
    return;
  }
  out.push_back(make("graphics.tile.order", walk.order, "", walk.order_confidence, {walked->s->id},
                     "Tiles ordered by their median ticket, against row-major, column-major, serpentine, "
                     "Morton and Hilbert walks over the tile grid (either orientation): the walk with the "
                     "highest Kendall tau, named when it reaches 0.75 and the next disagrees twice as "
                     "often (plus 3% of pairs); 'other' when none reaches 0.4.",
                     fmt::format("Kendall tau {:.2f} over {} x {} tiles. {}", walk.order_tau, walk.tiles_x,
                                 walk.tiles_y, walk.order_reason)));
}

// graphics.binning, from the widest trace: the most tiles on it.
void binning_finding(const std::vector<Trace>& traces, const Trace* const along[2], std::vector<Finding>& out) {
  const bool tile_found = along[0] && along[1];
  const Trace& b = traces.back();
  const uint64_t w = uint64_t{b.first.width} * b.first.stride, h = uint64_t{b.first.height} * b.first.stride;
  uint64_t tiles = 0;
  if (tile_found)
    tiles = ((w + along[0]->tiles.width.size_px - 1) / along[0]->tiles.width.size_px) *
            ((h + along[1]->tiles.height.size_px - 1) / along[1]->tiles.height.size_px);
  if (b.second.width == 0) {
    note_unfound("graphics.binning", fmt::format("{} holds one rectangle: binning needs two", b.s->id), {b.s->id});
    return;
  }
  const uint64_t pixels = meta_u32(*b.s, "width") && meta_u32(*b.s, "height")
                              ? uint64_t{meta_u32(*b.s, "width")} * meta_u32(*b.s, "height")
                              : w * h;
  const BinningReading bin = read_binning(b.first, b.second, pixels, tiles);
  if (!bin.decided) {
    note_unfound("graphics.binning", bin.reason, {b.s->id});
  } else {
    out.push_back(make(
        "graphics.binning", bin.binned, "", bin.confidence, {b.s->id},
        "Full-screen rectangles drawn in one pass, each fragment taking a ticket: at each recorded pixel, the "
        "tickets from rectangle 0's fragment to rectangle 1's. Binned when 90% or more of the pixels see rectangle 1 "
        "within half the target's fragments (each tile shades both before the next), immediate when at most "
        "2% do (rectangle 0 covers the screen first).",
        fmt::format("{:.1f}% of the {}x{} target's pixels see rectangle 1 within half its fragments; median "
                    "gap {:.0f} tickets.{}",
                    100 * bin.near_fraction, w, h, bin.median_gap,
                    bin.reason.empty() ? "" : " " + bin.reason + ".")));
  }
}

}  // namespace

std::vector<Finding> raster_findings(const Series* order, const Series* wide) {
  std::vector<Finding> out;
  std::vector<Trace> traces;
  std::vector<std::string> problems;
  for (const Series* s : {order, wide}) {
    if (!s) continue;
    std::string why;
    Trace t{s, series_field(*s, 0, &why), series_field(*s, 1), {}};
    if (t.first.width == 0) {
      problems.push_back(why);
      continue;
    }
    t.tiles = read_tiles(t.first);
    traces.push_back(std::move(t));
  }
  if (traces.empty()) {
    const std::string why = problems.empty() ? "no raster trace" : problems.front();
    std::vector<std::string> ev;
    for (const Series* s : {order, wide})
      if (s) ev.push_back(s->id);
    for (const char* id : {kAxisIds[0], kAxisIds[1], "graphics.tile.order", "graphics.binning"})
      note_unfound(id, why, ev);
    return out;
  }
  const Trace* along[2] = {trace_for_axis(traces, &TileReading::width), trace_for_axis(traces, &TileReading::height)};
  tile_axis_findings(traces, along, out);
  walk_finding(traces, along, out);
  binning_finding(traces, along, out);
  return out;
}

std::vector<Finding> tile_memory_findings(const Series& s, const Finding* binning) {
  const std::vector<std::string> ev = {s.id};
  const char* id = "graphics.tile.memory_bytes";
  if (binning && std::holds_alternative<bool>(binning->value) && !std::get<bool>(binning->value) &&
      binning->confidence >= 0.8) {
    note_unfound(id,
                 "the GPU renders each rectangle across the screen before the next (graphics.binning false): the "
                 "blocks its traces show are how it hands out fragments, not tiles held in a tile memory",
                 {s.id, binning->id});
    return {};
  }
  // A tile memory's tile only shrinks as pixels grow; one that grows again
  // is no tile held on chip (or a misread one).
  for (size_t i = 1; i < s.points.size(); ++i)
    if (s.points[i].x > s.points[i - 1].x && s.points[i].y > 1.05 * s.points[i - 1].y) {
      note_unfound(id,
                   fmt::format("the tile read grows from {:.0f} px at {:.0f} B per pixel to {:.0f} px at {:.0f}: "
                               "not the knee of a tile memory",
                               s.points[i - 1].y, s.points[i - 1].x, s.points[i].y, s.points[i].x),
                   ev);
      return {};
    }
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
  // The full tile held largest x last_full_bpp bytes, no more than the
  // memory; past a knee a tile snaps down by halving a side at a time, so it
  // holds a quarter of the memory or more. A tile read below a quarter of
  // that is a block inside the tile (llvmpipe's 16 x 16 inside its 64 x 64
  // under two threads, now and then at the last layout), not a knee.
  if (last_full_bpp > 0 && memory < 0.25 * largest * last_full_bpp) {
    note_unfound(id,
                 fmt::format("the tile read falls from {:.0f} px at {:.0f} B per pixel to hold {:.0f} B at most, "
                             "under a quarter of the {:.0f} B the full tile held: a block inside the tile, not the "
                             "knee of a tile memory",
                             largest, last_full_bpp, memory, largest * last_full_bpp),
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
