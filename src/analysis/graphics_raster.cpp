// Tile size, walk order and binning from raster traces (graphics.hpp).
#include "analysis/graphics.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <numeric>

namespace gpuscope::analysis {

namespace {

// Neighbouring ticket steps a level apart: the boundaries' steps must be at
// least this many times those inside tiles. A Morton curve's levels grow
// about 4x each, so a smaller factor would read every level of one as a
// tile.
constexpr double kLevelGap = 5.0;
// A period is accepted when at least this share of its multiples are
// boundaries (or all but one of six or more) and this share of boundaries
// lie at its multiples; or, where three or more of its multiples are
// boundaries, when the others all lie inside one cell (one tile shaded in
// another order: llvmpipe's last).
constexpr double kPeriodAgreement = 0.9;
// The smallest tile (px along an axis) read as one.
constexpr uint32_t kMinTilePx = 4;

// The ticket steps t(b) - t(b - 1) across the boundary between positions
// b - 1 and b, for b in 1 .. n - 1 (index b), over every line where both
// were recorded: `size` their median magnitude (at least 1), `unordered`
// whether time does not run forward there in (nearly) every line: the
// median step is negative, or 10% or more of the lines step against it.
// Inside one worker's tile it always runs forward; across a boundary
// between tiles in flight at once it runs either way as the workers drift.
// NaN size where no line had both. `at(line, pos)` reads the field.
struct Steps {
  std::vector<double> size;
  std::vector<char> unordered;
};

Steps step_profile(uint32_t n, uint32_t lines, const std::function<uint32_t(uint32_t, uint32_t)>& at) {
  Steps out{std::vector<double>(n, std::nan("")), std::vector<char>(n, 0)};
  std::vector<double> steps, sizes;
  for (uint32_t b = 1; b < n; ++b) {
    steps.clear();
    sizes.clear();
    for (uint32_t l = 0; l < lines; ++l) {
      const uint32_t a = at(l, b - 1), c = at(l, b);
      if (a == TicketField::kNoTicket || c == TicketField::kNoTicket) continue;
      steps.push_back(static_cast<double>(c) - static_cast<double>(a));
      sizes.push_back(std::fabs(steps.back()));
    }
    if (steps.empty()) continue;
    out.size[b] = std::max(1.0, median(sizes));
    const double m = median(steps);
    size_t against = 0;
    for (double v : steps) against += (v < 0) != (m < 0) ? 1 : 0;
    out.unordered[b] = m < 0 || static_cast<double>(against) >= 0.1 * static_cast<double>(steps.size());
  }
  return out;
}

// Whether every marked position off the multiples of `w` lies inside one
// cell of `w` (or there is none): one tile shaded out of the others' order
// (llvmpipe's last, in two parts).
bool strays_in_one_cell(const std::vector<char>& marked, uint32_t w, uint32_t n) {
  uint32_t stray_cell = UINT32_MAX;
  for (uint32_t b = 1; b < n; ++b) {
    if (!marked[b] || b % w == 0) continue;
    if (stray_cell != UINT32_MAX && stray_cell != b / w) return false;
    stray_cell = b / w;
  }
  return true;
}

struct Period {
  uint32_t size = 0;
  double recall = 0, precision = 0;
};

// The largest period whose multiples below n are (nearly) exactly the
// positions in `boundary`.
Period best_period(const std::vector<char>& boundary, const std::vector<char>& known, uint32_t n) {
  Period best;
  uint32_t total = 0;
  for (uint32_t b = 1; b < n; ++b) total += boundary[b] ? 1 : 0;
  if (total == 0) return best;
  for (uint32_t w = 2; w < n; ++w) {
    uint32_t multiples = 0, hits = 0;
    for (uint32_t b = w; b < n; b += w) {
      if (!known[b]) continue;
      ++multiples;
      hits += boundary[b] ? 1 : 0;
    }
    if (multiples == 0) continue;
    const double recall = static_cast<double>(hits) / multiples;
    const double precision = static_cast<double>(hits) / total;
    const bool one_cell = hits >= 3 && strays_in_one_cell(boundary, w, n);
    // One multiple missed of six or more: two neighbouring tiles shaded in
    // lockstep by two workers step alike across their boundary.
    const bool one_missed = multiples >= 6 && multiples - hits == 1;
    if ((recall >= kPeriodAgreement || one_missed) && (precision >= kPeriodAgreement || one_cell))
      best = {w, recall, precision};
  }
  return best;
}

// The largest period at whose multiples three or more of the positions
// where time does not run forward lie, and no other such position (or all
// others inside one cell, as best_period allows), where every other
// multiple's step stands above every step inside the cells. Workers that
// share cores in time slices run some neighbouring tiles in lockstep (time
// runs either way across their boundary) and others in turn, one after the
// other, where the boundary is ordered but still a visit's jump; and a
// slice taken away inside a tile lifts a step there to within 5x of the
// boundaries' (kLevelGap), so the period is known by its order and this
// ranking instead.
Period turn_period(const std::vector<char>& unordered, const std::vector<char>& known,
                   const std::vector<double>& d, uint32_t n) {
  Period best;
  for (uint32_t w = 2; w < n; ++w) {
    uint32_t hits = 0;
    double inside = 0, lowest_other = HUGE_VAL;
    for (uint32_t b = 1; b < n; ++b) {
      if (!known[b]) continue;
      if (b % w == 0 && unordered[b]) {
        ++hits;
      } else if (b % w == 0) {
        lowest_other = std::min(lowest_other, d[b]);
      } else if (!unordered[b]) {
        inside = std::max(inside, d[b]);
      }
    }
    if (hits >= 3 && lowest_other > inside && strays_in_one_cell(unordered, w, n)) best = {w, 1.0, 1.0};
  }
  return best;
}

// The positions between neighbouring cells along an axis: which were
// both recorded, and which run backward in time.
struct AxisSteps {
  std::vector<double> d;        // the ticket step at each position (NaN: not recorded)
  std::vector<char> known;      // both cells recorded
  std::vector<char> unordered;  // known, and time does not run forward
  std::vector<double> logs;     // ln of the ordered positions' steps, sorted
  size_t pairs = 0;             // known positions
};

AxisSteps axis_steps(uint32_t n, uint32_t lines, const std::function<uint32_t(uint32_t, uint32_t)>& at) {
  const Steps steps = step_profile(n, lines, at);
  AxisSteps a{steps.size, std::vector<char>(n, 0), std::vector<char>(n, 0), {}, 0};
  // The size levels are read among the positions where time runs forward:
  // an unordered position is a boundary by its order whatever its size, and
  // two tiles shaded in lockstep by two workers step little across theirs
  // (llvmpipe with four threads on two cores: 864 tickets against 5947 and
  // more at the other tile boundaries and 419 at most inside tiles), which
  // would otherwise fill the gap between the levels.
  for (uint32_t b = 1; b < n; ++b)
    if (!std::isnan(a.d[b])) {
      a.known[b] = 1;
      ++a.pairs;
      if (!steps.unordered[b]) a.logs.push_back(std::log(a.d[b]));
    }
  std::sort(a.logs.begin(), a.logs.end());
  for (uint32_t b = 1; b < n; ++b) a.unordered[b] = a.known[b] && steps.unordered[b];
  return a;
}

// Candidate periods: every gap of kLevelGap or more between consecutive
// step sizes splits positions into a level inside tiles and one between
// them; and the positions where time does not run forward are boundaries
// too. Inside one worker's tile the order runs forward along both axes
// (scan lines, quads, Morton), so the tile is the largest candidate with no
// such position inside its cells: finer candidates are the order inside a
// tile (quads, blocks); coarser ones with unordered positions inside are
// groups of tiles shaded at once by several workers, whose boundaries with
// the next group are larger than those between them. Each level's
// boundaries are also taken together with the unordered positions:
// boundaries between tiles in flight at once may be too close in size to
// the steps inside tiles to stand apart by size alone. Every rasteriser
// shades 2x2 quads, whose second row or column steps apart from the first
// in any order: a period below kMinTilePx is the quad (or scan lines
// inside a wider tile), not a tile.
std::vector<Period> candidate_periods(const AxisSteps& a, uint32_t n, uint32_t stride) {
  std::vector<Period> candidates;
  const auto consider = [&](const Period& p) {
    if (p.size && p.size * stride >= kMinTilePx) candidates.push_back(p);
  };
  consider(best_period(a.unordered, a.known, n));
  consider(turn_period(a.unordered, a.known, a.d, n));
  for (size_t i = 0; i + 1 < a.logs.size(); ++i) {
    if (a.logs[i + 1] - a.logs[i] < std::log(kLevelGap)) continue;
    const double threshold = std::exp(0.5 * (a.logs[i] + a.logs[i + 1]));
    std::vector<char> boundary(n, 0);
    for (uint32_t b = 1; b < n; ++b) boundary[b] = a.known[b] && a.d[b] > threshold;
    consider(best_period(boundary, a.known, n));
    for (uint32_t b = 1; b < n; ++b) boundary[b] = boundary[b] || a.unordered[b];
    consider(best_period(boundary, a.known, n));
  }
  return candidates;
}

// The tile among the candidates: the largest with no unordered position
// inside its cells (but for one cell of three or more), unless it has one
// boundary that finer candidates' far smaller steps outvote.
Period choose_period(const std::vector<Period>& candidates, const AxisSteps& a, uint32_t n,
                     bool& one_cell_disordered) {
  // The typical step at a candidate's boundaries.
  const auto level = [&](uint32_t period) {
    std::vector<double> v;
    for (uint32_t b = period; b < n; b += period)
      if (a.known[b]) v.push_back(a.d[b]);
    return v.empty() ? 0.0 : quantile(v, 0.1);
  };
  const auto count = [&](uint32_t period) { return (n - 1) / period; };
  // The cells (along this axis) of a candidate holding unordered positions
  // inside them. One such cell out of three or more is taken for a tile
  // shaded out of the usual order (llvmpipe shades its last tile in two
  // parts at once), not for a group of tiles in flight together, which
  // would repeat in every group.
  const auto disordered_cells = [&](uint32_t period) {
    std::vector<uint32_t> cells;
    for (uint32_t b = 1; b < n; ++b)
      if (a.unordered[b] && b % period != 0 && (cells.empty() || cells.back() != b / period))
        cells.push_back(b / period);
    return cells;
  };
  Period chosen;
  one_cell_disordered = false;
  for (const Period& p : candidates) {
    const std::vector<uint32_t> cells = disordered_cells(p.size);
    const bool one_cell = cells.size() == 1 && n / p.size >= 3;
    if ((!cells.empty() && !one_cell) || p.size <= chosen.size) continue;
    // A single boundary (the last tile row cut short, say) may stand out
    // from the others only by chance: it beats a finer candidate with
    // several boundaries only when those are far smaller, the order inside
    // a tile rather than tile boundaries.
    bool outvoted = false;
    if (count(p.size) == 1)
      for (const Period& q : candidates)
        outvoted = outvoted || (q.size < p.size && count(q.size) >= 2 && p.size % q.size == 0 &&
                                level(q.size) * 20 > level(p.size));
    if (!outvoted) {
      chosen = p;
      one_cell_disordered = one_cell;
    }
  }
  return chosen;
}

// `n` cells of `stride` px along the axis, over `lines` lines.
TileAxis read_axis(uint32_t n, uint32_t lines, uint32_t stride,
                   const std::function<uint32_t(uint32_t, uint32_t)>& at, const char* axis) {
  TileAxis out;
  if (n < 4 || lines == 0) {
    out.reason = fmt::format("the target is {} px along {}: too small to show a tile", n * stride, axis);
    return out;
  }
  const AxisSteps a = axis_steps(n, lines, at);
  if (a.pairs < 3) {
    out.reason = fmt::format("fewer than 3 neighbouring pairs along {} were both recorded", axis);
    return out;
  }
  bool chosen_one_cell_disordered = false;
  const Period chosen = choose_period(candidate_periods(a, n, stride), a, n, chosen_one_cell_disordered);
  if (chosen.size == 0) {
    out.reason = fmt::format(
        "no periodic set of positions along {} where the ticket step between neighbours stands out {}x from "
        "the others: the tile is at least {} px, or the order is not tiled (scan lines, or no order at all)",
        axis, kLevelGap, n * stride);
    return out;
  }
  std::vector<double> at_multiples, inside;
  for (uint32_t b = 1; b < n; ++b) {
    if (!a.known[b]) continue;
    (b % chosen.size == 0 ? at_multiples : inside).push_back(a.d[b]);
  }
  const double low = quantile(at_multiples, 0.1);
  const double high = inside.empty() ? 1.0 : quantile(inside, 0.9);
  out.found = true;
  out.size_px = chosen.size * stride;
  out.boundaries = static_cast<uint32_t>(at_multiples.size());
  out.separation = low / std::max(high, 1.0);
  double c = out.separation >= 20 ? 0.95 : out.separation >= 8 ? 0.85 : 0.7;
  c *= std::min(chosen.recall, chosen.precision);
  if (out.boundaries == 1) {
    c = std::min(c, 0.5);
    out.reason = fmt::format("only one tile boundary inside the {} px target", n * stride);
  } else if (out.boundaries == 2) {
    c *= 0.9;
  }
  if (chosen_one_cell_disordered) {
    c *= 0.85;
    out.reason = fmt::format("one tile along {} was shaded out of the others' order", axis);
  }
  out.confidence = c;
  return out;
}

}  // namespace

TileReading read_tiles(const TicketField& f) {
  TileReading r;
  const auto row_at = [&f](uint32_t y, uint32_t x) { return f.ticket[size_t{y} * f.width + x]; };
  const auto col_at = [&f](uint32_t x, uint32_t y) { return f.ticket[size_t{y} * f.width + x]; };
  r.width = read_axis(f.width, f.height, f.stride, row_at, "x");
  r.height = read_axis(f.height, f.width, f.stride, col_at, "y");
  read_walk(f, r);
  return r;
}

BinningReading read_binning(const TicketField& first, const TicketField& second, uint64_t pixels,
                            uint64_t tiles) {
  BinningReading out;
  std::vector<double> gaps;
  uint64_t near = 0;
  const size_t cells = std::min(first.ticket.size(), second.ticket.size());
  for (size_t c = 0; c < cells; ++c) {
    const uint32_t a = first.ticket[c], b = second.ticket[c];
    if (a == TicketField::kNoTicket || b == TicketField::kNoTicket) continue;
    const double gap = static_cast<double>(b) - static_cast<double>(a);
    gaps.push_back(gap);
    near += gap < 0.5 * static_cast<double>(pixels) ? 1 : 0;
  }
  if (gaps.size() < 16 || pixels < 16) {
    out.reason = fmt::format("{} pixels with both rectangles' tickets recorded: too few to tell", gaps.size());
    return out;
  }
  out.near_fraction = static_cast<double>(near) / static_cast<double>(gaps.size());
  out.median_gap = median(gaps);
  if (out.near_fraction >= 0.9) {
    out.decided = true;
    out.binned = true;
    out.confidence = 0.9;
  } else if (out.near_fraction <= 0.02) {
    out.decided = true;
    out.binned = false;
    out.confidence = tiles >= 4 ? 0.85 : 0.5;
    if (tiles < 4)
      out.reason = tiles == 0 ? "no tile was found on the trace: a bin covering the whole target would look alike"
                              : fmt::format("the target holds only {} tile(s): a bin covering it would look alike",
                                            tiles);
  } else {
    out.reason = fmt::format(
        "{:.1f}% of the pixels shaded rectangle 1 within half a screen of tickets after rectangle 0: neither "
        "(nearly) all (binning) nor (nearly) none (immediate)",
        100 * out.near_fraction);
  }
  return out;
}

}  // namespace gpuscope::analysis
