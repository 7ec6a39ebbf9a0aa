// The walk between tiles (graphics.hpp): tiles ordered by their median
// ticket against named walks over the tile grid, by Kendall's tau.
#include "analysis/graphics.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>

namespace gpuscope::analysis {

namespace {

// The index of tile (i, j) in a named walk over nx x ny tiles.
using WalkIndex = std::function<uint64_t(uint32_t, uint32_t)>;

uint64_t interleave(uint32_t lo, uint32_t hi) {
  uint64_t out = 0;
  for (int b = 0; b < 32; ++b)
    out |= (uint64_t{(lo >> b) & 1u} << (2 * b)) | (uint64_t{(hi >> b) & 1u} << (2 * b + 1));
  return out;
}

// Hilbert index of (x, y) on an n x n grid (n a power of two).
uint64_t hilbert(uint32_t n, uint32_t x, uint32_t y) {
  uint64_t d = 0;
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    const uint32_t rx = (x & s) ? 1 : 0, ry = (y & s) ? 1 : 0;
    d += uint64_t{s} * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = s - 1 - (x & (s - 1));
        y = s - 1 - (y & (s - 1));
      }
      std::swap(x, y);
    }
    x &= s - 1;
    y &= s - 1;
  }
  return d;
}

std::vector<WalkIndex> walk_variants(const std::string& walk, uint32_t nx, uint32_t ny) {
  const uint32_t n = std::bit_ceil(std::max({nx, ny, 1u}));
  if (walk == "row-major") return {[nx](uint32_t i, uint32_t j) { return uint64_t{j} * nx + i; }};
  if (walk == "column-major") return {[ny](uint32_t i, uint32_t j) { return uint64_t{i} * ny + j; }};
  if (walk == "serpentine")
    return {[nx](uint32_t i, uint32_t j) { return uint64_t{j} * nx + (j % 2 ? nx - 1 - i : i); }};
  if (walk == "morton")
    return {[](uint32_t i, uint32_t j) { return interleave(i, j); },
            [](uint32_t i, uint32_t j) { return interleave(j, i); }};
  if (walk == "hilbert")
    return {[n](uint32_t i, uint32_t j) { return hilbert(n, i, j); },
            [n](uint32_t i, uint32_t j) { return hilbert(n, j, i); }};
  return {};
}

struct TileStart {
  uint32_t i, j;
  double when;  // the tile's median ticket
};

std::vector<TileStart> tile_times(const TicketField& f, uint32_t tw, uint32_t th) {
  const uint32_t nx = (f.width + tw - 1) / tw, ny = (f.height + th - 1) / th;
  std::vector<TileStart> out;
  std::vector<double> t;
  for (uint32_t j = 0; j < ny; ++j)
    for (uint32_t i = 0; i < nx; ++i) {
      t.clear();
      for (uint32_t y = j * th; y < std::min(f.height, (j + 1) * th); ++y)
        for (uint32_t x = i * tw; x < std::min(f.width, (i + 1) * tw); ++x) {
          const uint32_t v = f.ticket[size_t{y} * f.width + x];
          if (v != TicketField::kNoTicket) t.push_back(v);
        }
      if (!t.empty()) out.push_back({i, j, median(t)});
    }
  // Kendall's tau is quadratic: at most 2048 tiles, evenly picked.
  if (out.size() > 2048) {
    std::vector<TileStart> picked;
    const double step = static_cast<double>(out.size()) / 2048;
    for (size_t k = 0; k < 2048; ++k) picked.push_back(out[static_cast<size_t>(k * step)]);
    out = std::move(picked);
  }
  return out;
}

double kendall(const std::vector<TileStart>& tiles, const WalkIndex& index) {
  if (tiles.size() < 2) return 0;
  std::vector<uint64_t> idx;
  for (const auto& t : tiles) idx.push_back(index(t.i, t.j));
  int64_t concordant = 0, discordant = 0;
  for (size_t a = 0; a < tiles.size(); ++a)
    for (size_t b = a + 1; b < tiles.size(); ++b) {
      const double dt = tiles[b].when - tiles[a].when;
      const int64_t di = static_cast<int64_t>(idx[b]) - static_cast<int64_t>(idx[a]);
      if (dt == 0 || di == 0) continue;
      ((dt > 0) == (di > 0) ? concordant : discordant) += 1;
    }
  const int64_t n = concordant + discordant;
  return n ? static_cast<double>(concordant - discordant) / static_cast<double>(n) : 0;
}

const char* const kWalks[] = {"row-major", "column-major", "serpentine", "morton", "hilbert"};

}  // namespace

double walk_agreement(const TicketField& field, uint32_t tile_w_px, uint32_t tile_h_px, const std::string& walk) {
  const uint32_t tile_w = std::max(tile_w_px / field.stride, 1u), tile_h = std::max(tile_h_px / field.stride, 1u);
  const uint32_t nx = (field.width + tile_w - 1) / tile_w, ny = (field.height + tile_h - 1) / tile_h;
  const auto tiles = tile_times(field, tile_w, tile_h);
  double best = -1;
  for (const auto& v : walk_variants(walk, nx, ny)) best = std::max(best, kendall(tiles, v));
  return best;
}

void read_walk(const TicketField& f, TileReading& r) {
  if (!r.width.found || !r.height.found) {
    r.order_reason = "the walk between tiles needs the tile's width and height";
    return;
  }
  // The tile in cells of the field.
  if (r.width.size_px % f.stride != 0 || r.height.size_px % f.stride != 0) {
    r.order_reason = fmt::format("the {}x{} px tile does not fall on the trace's {} px grid", r.width.size_px,
                                 r.height.size_px, f.stride);
    return;
  }
  const uint32_t tw = r.width.size_px / f.stride, th = r.height.size_px / f.stride;
  r.tiles_x = (f.width + tw - 1) / tw;
  r.tiles_y = (f.height + th - 1) / th;
  const auto tiles = tile_times(f, tw, th);
  std::vector<std::pair<double, std::string>> taus;
  for (const char* walk : kWalks) {
    double best = -1;
    for (const auto& v : walk_variants(walk, r.tiles_x, r.tiles_y)) best = std::max(best, kendall(tiles, v));
    taus.emplace_back(best, walk);
  }
  std::sort(taus.begin(), taus.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const double best = taus[0].first, margin = best - taus[1].first;
  const double axes = std::min(r.width.confidence, r.height.confidence);
  r.order_tau = best;
  if (tiles.size() < 4) {
    r.order_reason = fmt::format("only {} tile(s) on the target: too few to tell a walk", tiles.size());
  } else if (best >= 0.75 && margin >= (1 - best) + 0.03) {
    // The next walk must disagree with the order at least twice as often
    // (discordant pairs, 1 - tau) as the one named, and by 3% of all pairs.
    r.order = taus[0].second;
    r.order_confidence = axes * (0.6 + 0.4 * std::min(1.0, margin / 0.2)) * (best >= 0.9 ? 1.0 : 0.85);
    if (margin < 0.2)
      r.order_reason = fmt::format("{} came next (tau {:.2f})", taus[1].second, taus[1].first);
  } else if (best < 0.4 && tiles.size() >= 8) {
    r.order = "other";
    r.order_confidence = std::min(axes, 0.5);
    r.order_reason =
        fmt::format("the closest named walk, {}, agrees only to tau {:.2f}", taus[0].second, best);
  } else {
    r.order_reason = fmt::format(
        "the tiles' order fits {} (Kendall tau {:.2f}) and {} ({:.2f}) too alike to name one on {} x {} "
        "tiles",
        taus[0].second, best, taus[1].second, taus[1].first, r.tiles_x, r.tiles_y);
  }
}

}  // namespace gpuscope::analysis
