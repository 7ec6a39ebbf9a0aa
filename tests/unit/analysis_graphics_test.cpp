// The graphics analysis (analysis/graphics.hpp) on synthetic traces and
// series: tiles of several sizes and walks with 1 to 4 tiles in flight,
// tiles cut short at the target's edge, noise and scan lines (no tile);
// binning; the tile-memory knee; fill rates; the compression block;
// transaction elimination. And the graphics probes' host-side checks.
#include "analysis/analyze.hpp"
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "support/graphics_results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <random>

namespace gpuscope::analysis {
namespace {

enum class Walk { kRowMajor, kSerpentine, kMorton, kColumnMajor };

uint64_t morton(uint32_t x, uint32_t y) {
  uint64_t out = 0;
  for (int b = 0; b < 16; ++b)
    out |= (uint64_t{(x >> b) & 1u} << (2 * b)) | (uint64_t{(y >> b) & 1u} << (2 * b + 1));
  return out;
}

struct TraceSpec {
  uint32_t width = 512, height = 256;
  uint32_t tile_w = 64, tile_h = 64;
  Walk walk = Walk::kRowMajor;
  int in_flight = 1;
  bool quads = false;  // inside a tile: 4x4 blocks in row-major order, row-major inside each (llvmpipe's way)
  bool blocks = false;  // with quads: the 4x4 blocks grouped in 16x16 blocks, row-major (llvmpipe's 64 px tiles)
  uint32_t rects = 1;
  bool binned = true;  // rects > 1: each tile shades all its rectangles before the next tile
  unsigned seed = 1;
  // More workers than cores: where cores < in_flight, only `cores` workers
  // run at a time, drawn again every `slice` tickets (a time slice).
  int cores = 0;
  uint32_t slice = 1000;
};

// The tiles' pixels in the order one worker shades them.
std::vector<uint32_t> tile_pixels(const TraceSpec& s, uint32_t tx, uint32_t ty) {
  std::vector<uint32_t> out;
  const uint32_t x0 = tx * s.tile_w, y0 = ty * s.tile_h;
  const uint32_t x1 = std::min(s.width, x0 + s.tile_w), y1 = std::min(s.height, y0 + s.tile_h);
  const uint32_t q = s.quads ? 4 : 1;
  const uint32_t b = s.quads && s.blocks ? 16 : q;
  for (uint32_t gy = y0; gy < y1; gy += b)
    for (uint32_t gx = x0; gx < x1; gx += b)
      for (uint32_t by = gy; by < std::min(y1, gy + b); by += q)
        for (uint32_t bx = gx; bx < std::min(x1, gx + b); bx += q)
          for (uint32_t y = by; y < std::min(y1, by + q); ++y)
            for (uint32_t x = bx; x < std::min(x1, bx + q); ++x) out.push_back(x + y * s.width);
  return out;
}

using Trace = test::TicketLog;

// k workers take tiles in walk order from one queue; at each ticket a
// random busy worker shades its next fragment.
Trace make_trace(const TraceSpec& s) {
  const uint32_t nx = (s.width + s.tile_w - 1) / s.tile_w, ny = (s.height + s.tile_h - 1) / s.tile_h;
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> tiles;
  for (uint32_t j = 0; j < ny; ++j)
    for (uint32_t i = 0; i < nx; ++i) {
      uint64_t key = 0;
      switch (s.walk) {
        case Walk::kRowMajor:
          key = uint64_t{j} * nx + i;
          break;
        case Walk::kColumnMajor:
          key = uint64_t{i} * ny + j;
          break;
        case Walk::kSerpentine:
          key = uint64_t{j} * nx + (j % 2 ? nx - 1 - i : i);
          break;
        case Walk::kMorton:
          key = morton(i, j);
          break;
      }
      tiles.push_back({key, {i, j}});
    }
  std::sort(tiles.begin(), tiles.end());
  // A job: one tile's fragments of the rectangles it shades (all of them
  // when binned; immediate mode runs one tile list per rectangle).
  struct Job {
    std::vector<uint32_t> pixel, rect;
  };
  std::vector<Job> jobs;
  size_t tickets = 0;
  const uint32_t passes = s.binned ? 1 : s.rects;
  for (uint32_t pass = 0; pass < passes; ++pass)
    for (const auto& t : tiles) {
      Job job;
      const auto px = tile_pixels(s, t.second.first, t.second.second);
      job.pixel.reserve(px.size() * (s.binned ? s.rects : 1));
      job.rect.reserve(job.pixel.capacity());
      for (uint32_t r = 0; r < s.rects; ++r) {
        if (!s.binned && r != pass) continue;
        for (uint32_t p : px) {
          job.pixel.push_back(p);
          job.rect.push_back(r);
        }
      }
      tickets += job.pixel.size();
      jobs.push_back(std::move(job));
    }
  std::mt19937 rng(s.seed);
  Trace out;
  out.pixel.reserve(tickets);
  out.rect.reserve(tickets);
  struct Worker {
    int job = -1;
    size_t at = 0;
  };
  std::vector<Worker> workers(s.in_flight);
  std::vector<int> order(s.in_flight), running;
  std::iota(order.begin(), order.end(), 0);
  size_t next = 0;
  std::vector<int> busy;
  for (;;) {
    busy.clear();
    for (int w = 0; w < s.in_flight; ++w) {
      if (workers[w].job < 0 && next < jobs.size()) workers[w] = {static_cast<int>(next++), 0};
      if (workers[w].job >= 0) busy.push_back(w);
    }
    if (busy.empty()) break;
    if (s.cores > 0 && s.cores < static_cast<int>(busy.size())) {
      // The workers on the cores this slice: the first `cores` of a
      // shuffle redrawn every `slice` tickets.
      std::erase_if(running, [&](int r) { return workers[r].job < 0; });
      if (out.pixel.size() % s.slice == 0 || running.empty()) {
        std::shuffle(order.begin(), order.end(), rng);
        running.clear();
        for (int r : order)
          if (workers[r].job >= 0 && static_cast<int>(running.size()) < s.cores) running.push_back(r);
      }
      if (!running.empty()) busy = running;
    }
    Worker& w = workers[busy[std::uniform_int_distribution<size_t>(0, busy.size() - 1)(rng)]];
    const Job& j = jobs[w.job];
    out.pixel.push_back(j.pixel[w.at]);
    out.rect.push_back(j.rect[w.at]);
    if (++w.at == j.pixel.size()) w.job = -1;
  }
  return out;
}

// Rectangle `rect`'s field of a trace, every stride-th pixel.
TicketField field_of(const TraceSpec& s, const Trace& t, uint32_t rect, uint32_t stride = 1) {
  return series_field(test::raster_field_series(kRasterOrderSeries, t, s.width, s.height, s.rects, stride), rect);
}

TileReading read(const TraceSpec& s) { return read_tiles(field_of(s, make_trace(s), 0)); }

void expect_tile(const TileReading& r, uint32_t w, uint32_t h, const std::string& order) {
  ASSERT_TRUE(r.width.found) << r.width.reason;
  ASSERT_TRUE(r.height.found) << r.height.reason;
  EXPECT_EQ(r.width.size_px, w);
  EXPECT_EQ(r.height.size_px, h);
  EXPECT_GE(r.width.confidence, 0.5);
  EXPECT_GE(r.height.confidence, 0.5);
  EXPECT_EQ(r.order, order) << r.order_reason << " tau " << r.order_tau;
  if (!order.empty()) EXPECT_GE(r.order_confidence, 0.5);
}

TEST(GraphicsRaster, RowMajor64WithOneTwoFourTilesInFlight) {
  for (int k : {1, 2, 4}) {
    for (bool quads : {false, true}) {
      SCOPED_TRACE(testing::Message() << k << " in flight, quads " << quads);
      TraceSpec s;
      s.in_flight = k;
      s.quads = quads;
      s.seed = 10 + k;
      expect_tile(read(s), 64, 64, "row-major");
    }
  }
}

// 64 px row-major tiles of 4x4 quads (grouped in 16 px blocks where
// `blocks`) read right with each of `in_flight` tiles at once, over the
// seeds [first, last).
void expect_row_major_64_over_seeds(bool blocks, std::initializer_list<int> in_flight, unsigned first,
                                    unsigned last) {
  for (int k : in_flight)
    for (unsigned seed = first; seed < last; ++seed) {
      SCOPED_TRACE(testing::Message() << k << " in flight, seed " << seed);
      TraceSpec s;
      s.in_flight = k;
      s.quads = true;
      s.blocks = blocks;
      s.seed = seed;
      expect_tile(read(s), 64, 64, "row-major");
    }
}

TEST(GraphicsRaster, RowMajor64StableOverSeeds) { expect_row_major_64_over_seeds(false, {2, 3, 4}, 100, 112); }

// llvmpipe's order inside a tile (16 px blocks of 4x4 quads) with two or
// four tiles in flight: neighbouring tiles shaded in lockstep step little
// and either way across their boundary, no more than a block's step inside
// a tile, so their boundary is known by its order, not its size.
TEST(GraphicsRaster, TilesInLockstepAreKnownByTheirOrder) { expect_row_major_64_over_seeds(true, {2, 4}, 200, 220); }

// llvmpipe with four threads on two cores: two workers run at a time, in
// time slices. Neighbouring tiles run in lockstep at some boundaries and
// in turn at others, and a slice taken away inside a tile lifts a block's
// step there to a third of the tile boundaries' (seed 35 with 1000-ticket
// slices read 16 px blocks as tiles at 0.85): the tile is known by where
// time runs either way and by its other boundaries outranking every step
// inside (turn_period).
TEST(GraphicsRaster, TilesOfWorkersSharingCoresInTimeSlices) {
  for (uint32_t slice : {200u, 1000u, 4000u})
    for (unsigned seed = 1; seed < 40; ++seed) {
      SCOPED_TRACE(testing::Message() << "slices of " << slice << " tickets, seed " << seed);
      TraceSpec s;
      s.in_flight = 4;
      s.cores = 2;
      s.slice = slice;
      s.quads = s.blocks = true;
      s.rects = 2;
      s.seed = seed;
      expect_tile(read(s), 64, 64, "row-major");
    }
}

TEST(GraphicsRaster, Morton16) {
  TraceSpec s;
  s.width = 256;
  s.height = 256;
  s.tile_w = s.tile_h = 16;
  s.walk = Walk::kMorton;
  expect_tile(read(s), 16, 16, "morton");
  // Several in flight blur a Morton walk's levels (each about 4x the one
  // below, which the 5x level gap keeps apart from tiles): the reading may
  // be left unfound, but must not be wrong.
  for (int k : {2, 4}) {
    s.in_flight = k;
    const TileReading r = read(s);
    if (r.width.found) EXPECT_EQ(r.width.size_px, 16u);
    if (r.height.found) EXPECT_TRUE(r.height.size_px == 16 || (k == 2 && r.height.size_px == 32));
    if (!r.order.empty()) EXPECT_TRUE(r.order == "morton" || k == 2) << r.order;
  }
}

TEST(GraphicsRaster, Serpentine32x16) {
  TraceSpec s;
  s.tile_w = 32;
  s.tile_h = 16;
  s.walk = Walk::kSerpentine;
  s.in_flight = 2;
  expect_tile(read(s), 32, 16, "serpentine");
}

TEST(GraphicsRaster, ColumnMajor) {
  TraceSpec s;
  s.tile_w = 32;
  s.tile_h = 32;
  s.walk = Walk::kColumnMajor;
  s.in_flight = 3;
  expect_tile(read(s), 32, 32, "column-major");
}

TEST(GraphicsRaster, TilesCutShortAtTheEdge) {
  TraceSpec s;
  s.width = 480;   // 7.5 tiles
  s.height = 200;  // 3.125 tiles
  s.in_flight = 4;
  s.quads = true;
  expect_tile(read(s), 64, 64, "row-major");
}

TEST(GraphicsRaster, NoiseAndScanLinesGiveNoTile) {
  TraceSpec s;
  std::vector<uint32_t> order(s.width * s.height);
  std::iota(order.begin(), order.end(), 0u);
  const auto one_rect = [&] { return field_of(s, Trace{order, std::vector<uint32_t>(order.size(), 0)}, 0); };
  const TileReading scan = read_tiles(one_rect());
  EXPECT_FALSE(scan.width.found);
  EXPECT_FALSE(scan.height.found);
  EXPECT_TRUE(scan.order.empty());
  std::mt19937 rng(3);
  std::shuffle(order.begin(), order.end(), rng);
  const TileReading noise = read_tiles(one_rect());
  EXPECT_FALSE(noise.width.found) << noise.width.size_px;
  EXPECT_FALSE(noise.height.found) << noise.height.size_px;
  EXPECT_FALSE(noise.width.reason.empty());
}

TEST(GraphicsRaster, TileAsLargeAsTheTargetIsNotFound) {
  TraceSpec s;
  s.width = 256;
  s.height = 128;
  s.tile_w = 256;
  s.tile_h = 128;
  const TileReading r = read(s);
  EXPECT_FALSE(r.width.found);
  EXPECT_FALSE(r.height.found);
}

TEST(GraphicsRaster, WalkAgreementRanksTheTrueWalkFirst) {
  TraceSpec s;
  s.tile_w = s.tile_h = 32;
  s.walk = Walk::kSerpentine;
  const TicketField f = field_of(s, make_trace(s), 0);
  EXPECT_NEAR(walk_agreement(f, 32, 32, "serpentine"), 1.0, 1e-9);
  EXPECT_LT(walk_agreement(f, 32, 32, "row-major"), 0.9);
  EXPECT_LT(walk_agreement(f, 32, 32, "morton"), 0.9);
}

TEST(GraphicsRaster, SeriesFieldReadsEachRectangleAndRejectsOldTraces) {
  TraceSpec s;
  s.width = 64;
  s.height = 32;
  s.tile_w = s.tile_h = 16;
  s.rects = 2;
  const Trace t = make_trace(s);
  const Series series = test::raster_field_series(kRasterOrderSeries, t, s.width, s.height, 2, 4);
  const TicketField f1 = series_field(series, 1);
  ASSERT_EQ(f1.width, 16u);
  ASSERT_EQ(f1.height, 8u);
  EXPECT_EQ(f1.stride, 4u);
  for (size_t k = 0; k < t.pixel.size(); ++k)
    if (t.rect[k] == 1 && t.pixel[k] == 4 + 8 * s.width) EXPECT_EQ(f1.ticket[1 + 2 * 16], k);
  std::string why;
  EXPECT_EQ(series_field(series, 2, &why).width, 0u);
  EXPECT_NE(why.find("not rectangle 2"), std::string::npos) << why;
  Series old = series;
  old.meta.erase("cells_x");
  EXPECT_EQ(series_field(old, 0, &why).width, 0u);
  EXPECT_NE(why.find("rerun the raster probe"), std::string::npos) << why;
  old = series;
  old.points.pop_back();
  EXPECT_EQ(series_field(old, 0).width, 0u) << "a field one point short";
  // A damaged shape whose cells x rectangles overflow 64 bits is refused,
  // not allocated.
  old = series;
  old.meta["cells_x"] = 4000000000.0;
  old.meta["cells_y"] = 4000000000.0;
  old.meta["rects"] = 2000000000.0;
  EXPECT_EQ(series_field(old, 0).width, 0u);
}

// Large bins on a large target traced every 8th pixel: the tile (a multiple
// of 8) is read in pixels.
TEST(GraphicsRaster, StridedFieldReadsLargeTiles) {
  TraceSpec s;
  s.width = 1024;
  s.height = 1024;
  s.tile_w = 256;
  s.tile_h = 128;
  s.rects = 2;
  s.quads = true;
  const TileReading r = read_tiles(field_of(s, make_trace(s), 0, 8));
  expect_tile(r, 256, 128, "row-major");
}

// A binning GPU whose walk runs on seamlessly (the tile below shaded right
// after the one above, scan lines inside): only the second rectangle's
// fragments between them part the tiles.
TEST(GraphicsRaster, SecondRectanglePartsSeamlessTiles) {
  TraceSpec s;
  s.tile_w = s.tile_h = 16;
  s.walk = Walk::kColumnMajor;
  s.rects = 1;
  EXPECT_FALSE(read(s).height.found && read(s).height.size_px == 16) << "one rectangle: no boundary to see";
  s.rects = 4;
  expect_tile(read(s), 16, 16, "column-major");
}

TEST(GraphicsRaster, QuadRowsAreNotTiles) {
  // 256-px scan lines of 2x2 quads inside bins as large as the target: the
  // quad rows step apart, yet a 2 px period is no tile.
  TraceSpec s;
  s.width = 256;
  s.height = 128;
  s.tile_w = 256;
  s.tile_h = 128;
  const Trace t = make_trace(s);
  Trace quads = t;
  // Reorder each 2-row band as quads: (x, y), (x+1, y), (x, y+1), (x+1, y+1).
  quads.pixel.clear();
  for (uint32_t y = 0; y < s.height; y += 2)
    for (uint32_t x = 0; x < s.width; x += 2)
      for (uint32_t p : {x + y * s.width, x + 1 + y * s.width, x + (y + 1) * s.width, x + 1 + (y + 1) * s.width})
        quads.pixel.push_back(p);
  const TileReading r = read_tiles(field_of(s, quads, 0));
  EXPECT_FALSE(r.height.found) << r.height.size_px;
  EXPECT_FALSE(r.width.found) << r.width.size_px;
}

TEST(GraphicsRaster, BinnedAndImmediate) {
  TraceSpec s;
  s.rects = 2;
  s.in_flight = 4;
  s.quads = true;
  const Trace binned = make_trace(s);
  const uint64_t pixels = uint64_t{s.width} * s.height;
  const BinningReading b = read_binning(field_of(s, binned, 0), field_of(s, binned, 1), pixels, 32);
  ASSERT_TRUE(b.decided) << b.reason;
  EXPECT_TRUE(b.binned);
  EXPECT_GE(b.confidence, 0.7);
  s.binned = false;
  const Trace immediate = make_trace(s);
  const BinningReading i = read_binning(field_of(s, immediate, 0), field_of(s, immediate, 1), pixels, 32);
  ASSERT_TRUE(i.decided) << i.reason;
  EXPECT_FALSE(i.binned);
  EXPECT_GE(i.confidence, 0.8);
  // Without a tile, or with few on the target, immediate is only as sure
  // as a bin the size of the target is unlikely.
  EXPECT_LT(read_binning(field_of(s, immediate, 0), field_of(s, immediate, 1), pixels, 0).confidence, 0.6);
  EXPECT_LT(read_binning(field_of(s, immediate, 0), field_of(s, immediate, 1), pixels, 2).confidence, 0.6);
  // Half the pixels binned, half not: undecided.
  TicketField mixed = field_of(s, immediate, 1);
  const TicketField near = field_of(s, binned, 1), first = field_of(s, binned, 0);
  for (size_t c = 0; c < mixed.ticket.size(); c += 2) mixed.ticket[c] = near.ticket[c];
  EXPECT_FALSE(read_binning(first, mixed, pixels, 32).decided);
  // Too few recorded pixels decide nothing.
  TicketField sparse = first;
  for (size_t c = 8; c < sparse.ticket.size(); ++c) sparse.ticket[c] = TicketField::kNoTicket;
  EXPECT_FALSE(read_binning(sparse, near, pixels, 32).decided);
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(GraphicsRaster, AnalyzeAllReadsFullSizeTraces) {
  TraceSpec s;
  s.in_flight = 4;
  s.quads = true;
  s.rects = 2;
  Results r;
  r.series.push_back(test::raster_field_series(kRasterOrderSeries, make_trace(s), s.width, s.height, 2));
  EXPECT_TRUE(unusable_series(r).empty());
  const Analysis a = analyze_with_gaps(r);
  const Finding* w = find(a.findings, "graphics.tile.width_px");
  const Finding* h = find(a.findings, "graphics.tile.height_px");
  const Finding* o = find(a.findings, "graphics.tile.order");
  const Finding* b = find(a.findings, "graphics.binning");
  ASSERT_TRUE(w && h && o && b);
  EXPECT_EQ(number(*w), 64);
  EXPECT_EQ(number(*h), 64);
  EXPECT_EQ(std::get<std::string>(o->value), "row-major");
  EXPECT_EQ(std::get<bool>(b->value), true);
  EXPECT_EQ(w->evidence, std::vector<std::string>{kRasterOrderSeries});
  EXPECT_FALSE(w->display.name.empty());
  EXPECT_TRUE(w->display.known);
  EXPECT_TRUE(o->display.known);
}

// The small target holds one 256-px bin boundary along x and none along y;
// the wide trace (every 8th pixel of 2048x2048) gives both axes, the walk
// and binning.
TEST(GraphicsRaster, WideTraceGivesWhatTheSmallTargetCannot) {
  TraceSpec small;
  small.tile_w = small.tile_h = 256;
  small.rects = 2;
  small.quads = true;
  TraceSpec wide = small;
  wide.width = wide.height = 2048;
  Results r;
  r.series.push_back(test::raster_field_series(kRasterOrderSeries, make_trace(small), 512, 256, 2));
  const std::vector<Finding> alone = raster_findings(&r.series[0], nullptr);
  const Finding* x = find(alone, "graphics.tile.width_px");
  EXPECT_TRUE(!x || x->confidence <= 0.5) << "one boundary";
  const Finding* y = find(alone, "graphics.tile.height_px");
  EXPECT_EQ(y, nullptr) << "the 4x4 blocks inside the bin, 64x shorter than its width";
  r.series.push_back(test::raster_field_series(kRasterWideSeries, make_trace(wide), 2048, 2048, 2, 8));
  const std::vector<Finding> both = raster_findings(&r.series[0], &r.series[1]);
  const Finding* w = find(both, "graphics.tile.width_px");
  const Finding* h = find(both, "graphics.tile.height_px");
  const Finding* o = find(both, "graphics.tile.order");
  const Finding* b = find(both, "graphics.binning");
  ASSERT_TRUE(w && h && o && b);
  EXPECT_EQ(number(*w), 256);
  EXPECT_EQ(number(*h), 256);
  EXPECT_GE(w->confidence, 0.8);
  EXPECT_EQ(w->evidence, std::vector<std::string>{kRasterWideSeries});
  EXPECT_EQ(std::get<std::string>(o->value), "row-major");
  EXPECT_EQ(std::get<bool>(b->value), true);
}

TEST(GraphicsRaster, NoiseLeavesTheTileUnfoundWithAReason) {
  TraceSpec s;
  Trace t;
  t.pixel.resize(s.width * s.height);
  std::iota(t.pixel.begin(), t.pixel.end(), 0u);
  std::mt19937 rng(5);
  std::shuffle(t.pixel.begin(), t.pixel.end(), rng);
  t.rect.assign(t.pixel.size(), 0);
  Results r;
  r.series.push_back(test::raster_field_series(kRasterOrderSeries, t, s.width, s.height, 1));
  const Analysis a = analyze_with_gaps(r);
  EXPECT_EQ(find(a.findings, "graphics.tile.width_px"), nullptr);
  bool width = false, order_reason = false, binning = false;
  for (const auto& u : a.unfound) {
    width = width || (u.id == "graphics.tile.width_px" && !u.reason.empty());
    order_reason = order_reason || u.id == "graphics.tile.order";
    binning = binning || (u.id == "graphics.binning" && u.reason.find("one rectangle") != std::string::npos);
  }
  EXPECT_TRUE(width);
  EXPECT_TRUE(order_reason);
  EXPECT_TRUE(binning);
}

TEST(GraphicsRaster, TracesByTicketFromOlderRunsAreUnfoundWithTheReason) {
  Series old;
  old.id = kRasterOrderSeries;
  for (uint32_t t = 0; t < 64; ++t) old.points.push_back({double(t), double(t), {double(t)}});
  old.meta = {{"width", 8}, {"height", 8}, {"rects", 1}};
  Results r;
  r.series.push_back(old);
  const Analysis a = analyze_with_gaps(r);
  bool said = false;
  for (const auto& u : a.unfound)
    said = said || (u.id == "graphics.tile.width_px" && u.reason.find("rerun") != std::string::npos);
  EXPECT_TRUE(said);
}

Series points_series(const std::string& id, const std::vector<std::pair<double, std::vector<double>>>& pts) {
  Series s;
  s.id = id;
  for (const auto& [x, samples] : pts) {
    Point p;
    p.x = x;
    p.samples = samples;
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    p.y = sorted[sorted.size() / 2];
    s.points.push_back(p);
  }
  return s;
}

TEST(GraphicsTileMemory, KneeGivesTheMemory) {
  // 16x16 tiles up to 16 B/px, then 16x8, 8x8, 8x4: 4 KiB of tile memory.
  const Series s = points_series(kTileMemorySeries,
                                 {{4, {256}}, {8, {256}}, {16, {256}}, {32, {128}}, {64, {64}}, {128, {32}}});
  const auto fs = tile_memory_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 4096);
  EXPECT_GE(fs[0].confidence, 0.8);
  ASSERT_TRUE(fs[0].high);
  EXPECT_EQ(*fs[0].high, 256.0 * 32);
}

TEST(GraphicsTileMemory, ShrunkTileAtTheFirstPointsStillReads) {
  // A bin of 1 MiB: larger than the target at 4 and 8 B/px (no point), then halving.
  const Series s = points_series(kTileMemorySeries, {{16, {65536}}, {32, {32768}}, {64, {16384}}});
  const auto fs = tile_memory_findings(s);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 1048576);
}

// An immediate renderer's blocks (the H100's: 32 px, then 256, 8192, 64 ...)
// are no tile memory's.
TEST(GraphicsTileMemory, ImmediateOrGrowingTilesHaveNoMemory) {
  const Series s = points_series(kTileMemorySeries, {{4, {256}}, {8, {256}}, {16, {256}}, {32, {128}}, {64, {64}}});
  Finding immediate;
  immediate.id = "graphics.binning";
  immediate.value = false;
  immediate.confidence = 0.85;
  EXPECT_TRUE(tile_memory_findings(s, &immediate).empty());
  immediate.confidence = 0.5;
  EXPECT_EQ(tile_memory_findings(s, &immediate).size(), 1u) << "an unsure immediate reading does not veto";
  const Series growing =
      points_series(kTileMemorySeries, {{4, {32}}, {8, {32}}, {32, {256}}, {64, {8192}}, {128, {64}}});
  EXPECT_TRUE(tile_memory_findings(growing).empty());
}

// llvmpipe under two threads now and then reads its inner 16 x 16 block
// for a layout's 64 x 64 tile; at the last layout that looked like a knee.
// A tile past a knee holds a quarter of the memory or more.
TEST(GraphicsTileMemory, ABlockInsideTheTileAtTheLastLayoutIsNoKnee) {
  const Series s = points_series(kTileMemorySeries, {{4, {4096}}, {16, {4096}}, {64, {4096}}, {128, {4096}},
                                                     {256, {4096}}, {512, {256}}});
  EXPECT_TRUE(tile_memory_findings(s).empty());
}

TEST(GraphicsTileMemory, ConstantTileHasNoKnee) {
  const Series s = points_series(kTileMemorySeries, {{4, {4096}}, {16, {4096}}, {64, {4096}}, {256, {4096}}});
  EXPECT_TRUE(tile_memory_findings(s).empty());
}

TEST(GraphicsRates, FillRatesAndTexelsPerClock) {
  Results r;
  r.device.clock_mhz = 1000;
  r.device.compute_units = 4;
  Series rop = points_series("graphics.rop.rgba8.blend", {{1048576, {40, 41, 39, 40, 40}}});
  rop.meta = {{"rects", 100}, {"fragments_counted", 104857600}};
  r.series.push_back(rop);
  Series tex = points_series("graphics.texture.bilinear", {{64, {16, 16.2, 15.9}}});
  tex.meta = {{"samples_per_fragment", 16}};
  r.series.push_back(tex);
  const auto fs = fill_rate_findings(r);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].id, "graphics.rop.rgba8.blend.gpixels");
  EXPECT_EQ(number(fs[0]), 40);
  EXPECT_EQ(*fs[0].low, 39);
  EXPECT_EQ(fs[1].id, "graphics.texture.bilinear.gtexels");
  EXPECT_NE(fs[1].note.find("4.00 texels per clock per core"), std::string::npos) << fs[1].note;
}

TEST(GraphicsRates, CompressionBlock) {
  // Rendered: flat and blocks of 16 px or more read 3x as fast as noise.
  std::vector<std::pair<double, std::vector<double>>> rendered, storage;
  for (double x : {0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 4096.0}) {
    const double y = (x == 0 || (x >= 16 && x <= 64)) ? 300 : 100;
    rendered.push_back({x, {y * 0.99, y, y * 1.01}});
    storage.push_back({x, {99, 100, 101}});
  }
  const Series rs = points_series(kFbRenderedSeries, rendered);
  const Series ss = points_series(kFbStorageSeries, storage);
  const auto fs = fb_compression_findings(rs, &ss);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(number(fs[0]), 16);
  EXPECT_EQ(fs[0].evidence.size(), 2u);
  // The same gain in storage frames is not a compressor's.
  EXPECT_TRUE(fb_compression_findings(rs, &rs).empty());
  // No gain: nothing found.
  EXPECT_TRUE(fb_compression_findings(ss, nullptr).empty());
}

TEST(GraphicsRates, TransactionElimination) {
  const Series eliminated = points_series(kTxElimSeries, {{0, {50, 52, 51}}, {1, {100, 101, 99}}});
  auto fs = transaction_elimination_findings(eliminated);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_TRUE(std::get<bool>(fs[0].value));
  EXPECT_LE(fs[0].confidence, 0.6);
  const Series none = points_series(kTxElimSeries, {{0, {100, 102, 98}}, {1, {101, 99, 100}}});
  fs = transaction_elimination_findings(none);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_FALSE(std::get<bool>(fs[0].value));
  const Series unclear = points_series(kTxElimSeries, {{0, {85, 86, 84}}, {1, {100, 101, 99}}});
  EXPECT_TRUE(transaction_elimination_findings(unclear).empty());
}

TEST(GraphicsProbeChecks, ChecksumByBlocksEqualsFrameChecksum) {
  for (FramePattern p : {FramePattern::kFlat, FramePattern::kBlocks, FramePattern::kNoise})
    for (uint32_t block : {1u, 3u, 8u, 64u}) {
      FrameDesc f;
      f.width = 100;
      f.height = 70;
      f.pattern = p;
      f.block_px = block;
      f.seed = 9;
      EXPECT_EQ(graphics_probe::frame_checksum_by_blocks(f), frame_checksum(f));
    }
}

TEST(GraphicsProbeChecks, FlatReadBackIsChecked) {
  PassDesc pass;
  pass.width = 4;
  pass.height = 2;
  pass.rects = 3;
  pass.blend = true;
  FillResult r;
  // Blend of rectangles 0, 1, 2: R 3/255, G 1/255, B 1/255, A 3/255.
  for (int p = 0; p < 8; ++p)
    for (unsigned char c : {3, 1, 1, 3}) r.pixels.push_back(std::byte{c});
  EXPECT_NO_THROW(graphics_probe::check_flat_read_back(r, pass, "test"));
  r.pixels[5 * 4 + 1] = std::byte{2};
  EXPECT_THROW(graphics_probe::check_flat_read_back(r, pass, "test"), ValidationError);
  // Without blending the last rectangle's colour: (1, 0, 1, 1) / 255.
  pass.blend = false;
  r.pixels.clear();
  for (int p = 0; p < 8; ++p)
    for (unsigned char c : {1, 0, 1, 1}) r.pixels.push_back(std::byte{c});
  EXPECT_NO_THROW(graphics_probe::check_flat_read_back(r, pass, "test"));
  // Half floats.
  pass.colour = {PixelFormat::kRgba16f};
  EXPECT_THROW(graphics_probe::check_flat_read_back(r, pass, "test"), ValidationError);
  EXPECT_FLOAT_EQ(graphics_probe::half_to_float(0x3C00), 1.0f);
  EXPECT_FLOAT_EQ(graphics_probe::half_to_float(0x1C04), 0.0039215088f);
}

}  // namespace
}  // namespace gpuscope::analysis
