// The sim's raster model and SimDevice's GraphicsFacet against their
// contracts (graphics.hpp, raster_model.hpp, docs/sim.md's raster section):
// traces are permutations of the pass's fragments in the configured walk,
// tiles shrink by the stated rule, fill times follow the configured rates,
// pixels and frame checksums are what a GPU computes, and descriptions
// without a raster section (or with a bad one) give no graphics (or a clear
// error). Expected values are computed here from the description's meaning.
#include "backends/sim/raster_model.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <tuple>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

nlohmann::json preset_json(const std::string& name) { return load_sim_preset(name).source; }

nlohmann::json noiseless(nlohmann::json j) {
  j["noise"] = {{"relative_sigma", 0}, {"outlier_probability", 0}};
  return j;
}

double value_of(const nlohmann::json& v) { return v.is_object() ? v.at("value").get<double>() : v.get<double>(); }

// The message parse_sim_config gives for `j`, or "" when it accepts it.
std::string rejection(const nlohmann::json& j) {
  try {
    parse_sim_config(j, "test");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SimGraphics, EveryPresetHasGraphicsWithTheDescribedLimits) {
  for (const std::string& name : test::kSimPresets) {
    const SimConfig c = load_sim_preset(name);
    ASSERT_TRUE(c.raster.present) << name;
    SimDevice dev(c, "sim:" + name);
    GraphicsFacet* g = dev.graphics();
    ASSERT_NE(g, nullptr) << name;
    const GraphicsLimits l = g->graphics_limits();
    EXPECT_TRUE(l.any());
    EXPECT_EQ(l.max_width, c.raster.max_width);
    EXPECT_EQ(l.sample_counts, c.raster.sample_counts);
    EXPECT_EQ(l.fragment_side_effects, c.raster.fragment_side_effects);
    EXPECT_EQ(l.colour_formats.size(), 3u) << name;  // every preset renders rgba8, rgba16f, rgba32f
    EXPECT_TRUE(l.depth);
  }
}

TEST(SimGraphics, NoRasterSectionMeansNoGraphics) {
  nlohmann::json j = preset_json("mali-g52");
  j.erase("raster");
  const SimConfig c = parse_sim_config(j, "no-raster");
  EXPECT_FALSE(c.raster.present);
  SimDevice dev(c, "sim:no-raster");
  EXPECT_EQ(dev.graphics(), nullptr);
}

TEST(SimGraphics, BadRasterSectionsAreRejectedWithTheirPath) {
  const nlohmann::json base = preset_json("adreno-530");
  ASSERT_EQ(rejection(base), "");
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    const char* expect;  // part of the message
  };
  const std::vector<Case> cases = {
      {"unknown key", [](auto& r) { r["tile_size"] = 16; }, "raster.tile_size: unknown key"},
      {"unknown order", [](auto& r) { r["tile_order"] = "spiral"; }, "raster.tile_order: 'spiral' is not one of"},
      {"misaligned tile", [](auto& r) { r["tile_width_px"] = 96 + 1; }, "raster.tile_width_px: 97 px is not a multiple"},
      {"no 1x", [](auto& r) { r["sample_counts"] = {2, 4}; }, "raster.sample_counts: must start with 1"},
      {"odd samples", [](auto& r) { r["sample_counts"] = {1, 3}; }, "3 is not a power of two"},
      {"aniso without anisotropy", [](auto& r) { r["max_anisotropy"] = 0; }, "raster.texels_per_clock.aniso"},
      {"no rgba8", [](auto& r) { r["rop_pixels_per_clock"].erase("rgba8"); }, "needs rgba8"},
      {"blend of a missing format",
       [](auto& r) {
         r["rop_pixels_per_clock"].erase("rgba32f");
       },
       "raster.rop_blend_pixels_per_clock.rgba32f"},
      {"tile memory too small", [](auto& r) { r["tile_memory_bytes"] = 1024; }, "does not hold one RGBA8 tile"},
      {"zero rate", [](auto& r) { r["texels_per_clock"]["point"] = 0; }, "raster.texels_per_clock.point"},
      {"missing binning", [](auto& r) { r.erase("binning"); }, "raster.binning: missing"},
  };
  for (const Case& k : cases) {
    nlohmann::json j = base;
    k.edit(j["raster"]);
    const std::string msg = rejection(j);
    EXPECT_NE(msg.find(k.expect), std::string::npos) << k.what << ": got '" << msg << "'";
  }
}

// The rule: halve the longer side (the height when square) while bytes per
// pixel x pixels exceed the tile memory, keeping each side a multiple of its
// alignment; Mali-G52 (16x16, 8192 B, 4x4) and Adreno 530 (256x256, 1 MiB,
// 64x32) give these tiles exactly.
TEST(SimGraphics, TilesShrinkByHalvingTheLongerSide) {
  const RasterConfig mali = load_sim_preset("mali-g52").raster;
  const std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> mali_tiles = {
      {4, 16, 16}, {32, 16, 16}, {48, 16, 8}, {64, 16, 8}, {128, 8, 8}, {256, 8, 4}, {512, 4, 4}};
  for (const auto& [bpp, w, h] : mali_tiles) {
    const TileSize t = effective_tile(mali, bpp);
    EXPECT_EQ(t.width_px, w) << bpp << " B/px";
    EXPECT_EQ(t.height_px, h) << bpp << " B/px";
  }
  EXPECT_THROW(effective_tile(mali, 1024), OutOfResources);

  const RasterConfig a530 = load_sim_preset("adreno-530").raster;
  const std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> adreno_tiles = {
      {8, 256, 256}, {16, 256, 256}, {32, 256, 128}, {64, 128, 128}, {128, 128, 64}, {256, 64, 64}, {512, 64, 32}};
  for (const auto& [bpp, w, h] : adreno_tiles) {
    const TileSize t = effective_tile(a530, bpp);
    EXPECT_EQ(t.width_px, w) << bpp << " B/px";
    EXPECT_EQ(t.height_px, h) << bpp << " B/px";
  }
  EXPECT_THROW(effective_tile(a530, 1024), OutOfResources);

  // Past the knee the shrunk tile fills the memory exactly at power-of-two
  // bytes per pixel, for every preset (what the tile-memory probe reads).
  for (const std::string& name : test::kSimPresets) {
    const RasterConfig r = load_sim_preset(name).raster;
    const uint64_t full = uint64_t{r.tile_width_px} * r.tile_height_px;
    for (uint64_t bpp = 4; bpp <= 512; bpp *= 2) {
      const TileSize t = effective_tile(r, bpp);
      EXPECT_LE(bpp * t.pixels(), r.tile_memory_bytes) << name;
      if (bpp * full > r.tile_memory_bytes) EXPECT_EQ(bpp * t.pixels(), r.tile_memory_bytes) << name << " " << bpp;
    }
  }
}

TEST(SimGraphics, WalkOrdersVisitEveryTileOnceInTheirPattern) {
  auto flat = [](const std::vector<TileCoord>& w) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const auto& t : w) out.emplace_back(t.tx, t.ty);
    return out;
  };
  using V = std::vector<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(flat(tile_walk(TileOrder::row_major, 3, 2)), (V{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(flat(tile_walk(TileOrder::column_major, 3, 2)), (V{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  EXPECT_EQ(flat(tile_walk(TileOrder::serpentine, 3, 2)), (V{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {1, 1}, {0, 1}}));
  EXPECT_EQ(flat(tile_walk(TileOrder::morton, 4, 2)),
            (V{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {2, 1}, {3, 1}}));
  EXPECT_EQ(flat(tile_walk(TileOrder::hilbert, 2, 2)), (V{{0, 0}, {0, 1}, {1, 1}, {1, 0}}));
  // A Hilbert walk of a power-of-two square steps to a neighbour each time.
  const auto h = tile_walk(TileOrder::hilbert, 8, 8);
  ASSERT_EQ(h.size(), 64u);
  for (size_t i = 1; i < h.size(); ++i) {
    const int dx = static_cast<int>(h[i].tx) - static_cast<int>(h[i - 1].tx);
    const int dy = static_cast<int>(h[i].ty) - static_cast<int>(h[i - 1].ty);
    EXPECT_EQ(std::abs(dx) + std::abs(dy), 1) << i;
  }
  // Every order covers a grid that is not a power of two exactly once.
  for (TileOrder o : {TileOrder::row_major, TileOrder::column_major, TileOrder::serpentine, TileOrder::morton,
                      TileOrder::hilbert}) {
    const auto w = tile_walk(o, 5, 3);
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (const auto& t : w) {
      EXPECT_LT(t.tx, 5u);
      EXPECT_LT(t.ty, 3u);
      seen.emplace(t.tx, t.ty);
    }
    EXPECT_EQ(w.size(), 15u) << tile_order_name(o);
    EXPECT_EQ(seen.size(), 15u) << tile_order_name(o);
  }
  const auto quads = fragment_walk(FragmentOrder::row_major_quads, 4, 2);
  ASSERT_EQ(quads.size(), 8u);
  EXPECT_EQ(quads[1].x, 1u);
  EXPECT_EQ(quads[2].y, 1u);
  EXPECT_EQ(quads[4].x, 2u);
}

// Every (pixel, rectangle) of the pass exactly once, whatever the walk,
// with several tiles in flight and the description's noise; binning
// finishes a tile's rectangles before its next tile, immediate a rectangle
// before the next.
TEST(SimGraphics, TraceIsAPermutationOfThePassFragments) {
  for (const char* order : {"row-major", "column-major", "serpentine", "morton", "hilbert"})
    for (bool binning : {true, false}) {
      nlohmann::json j = preset_json("mali-g52");
      j["raster"]["tile_order"] = order;
      j["raster"]["binning"] = binning;
      j["raster"]["tiles_in_flight"] = 3;
      const SimConfig c = parse_sim_config(j, "trace");
      SimDevice dev(c, "sim:trace");
      PassDesc pass;
      pass.width = 50;  // not a whole number of tiles
      pass.height = 37;
      pass.rects = 3;
      const uint64_t n = uint64_t{pass.width} * pass.height * pass.rects;
      const RasterTrace t = dev.graphics()->trace_raster(pass, 1);
      ASSERT_EQ(t.tickets, n);
      ASSERT_EQ(t.stride, 1u);
      ASSERT_EQ(t.cells_x, pass.width);
      ASSERT_EQ(t.cells_y, pass.height);
      ASSERT_EQ(t.ticket.size(), n);
      // Every (pixel, rectangle) shaded once: the field is a permutation of the tickets.
      std::vector<uint32_t> sorted = t.ticket;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << order << (binning ? " binning" : " immediate");
      ASSERT_TRUE(t.timing.fragments.has_value());
      EXPECT_EQ(*t.timing.fragments, n);  // side effects: nothing is hidden
      // A pixel's next rectangle comes at most the tiles in flight's work
      // later when binning, at least the target's less that when immediate.
      const int64_t pixels = int64_t{pass.width} * pass.height, tile = 16 * 16, in_flight = 3;
      for (int64_t c = 0; c < pixels; ++c) {
        const int64_t gap = int64_t{t.ticket[pixels + c]} - int64_t{t.ticket[c]};
        if (binning)
          EXPECT_LE(gap, in_flight * tile * pass.rects) << order << " cell " << c;
        else
          EXPECT_GE(gap, pixels - in_flight * tile) << order << " cell " << c;
      }
    }
}

TEST(SimGraphics, OneTileInFlightShowsTheTileAndTheBinning) {
  nlohmann::json j = preset_json("mali-g52");
  j["raster"]["tiles_in_flight"] = 1;
  j["raster"]["tile_order"] = "row-major";
  const SimConfig c = parse_sim_config(j, "one");
  SimDevice dev(c, "sim:one");
  PassDesc pass;
  pass.width = 64;
  pass.height = 32;
  pass.rects = 2;
  pass.colour = {PixelFormat::kRgba32f, PixelFormat::kRgba32f, PixelFormat::kRgba32f, PixelFormat::kRgba32f};
  ASSERT_EQ(pass.bytes_per_pixel(), 64u);  // 16x16 x 64 B > 8192 B: the tile is 16x8
  const RasterTrace t = dev.graphics()->trace_raster(pass, 1);
  // The first tile: tickets 0 .. 127, rectangle 0, in the top-left 16x8;
  // then the same pixels in the same order for rectangle 1 (binning).
  const size_t pixels = size_t{pass.width} * pass.height;
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 16; ++x) {
      const uint32_t t0 = t.ticket[y * pass.width + x], t1 = t.ticket[pixels + y * pass.width + x];
      EXPECT_LT(t0, 128u) << x << "," << y;
      EXPECT_EQ(t1, t0 + 128) << x << "," << y;
    }
}

TEST(SimGraphics, TracesAreDeterministicForASeed) {
  auto trace = [](uint64_t seed) {
    nlohmann::json j = preset_json("mali-g52");
    j["noise"]["seed"] = seed;
    const SimConfig c = parse_sim_config(j, "seeded");
    SimDevice dev(c, "sim:seeded");
    PassDesc pass;
    pass.width = 128;
    pass.height = 64;
    return dev.graphics()->trace_raster(pass, 1).ticket;
  };
  EXPECT_EQ(trace(7), trace(7));
  EXPECT_NE(trace(7), trace(8));  // two tiles in flight interleave by the noise
}

TEST(SimGraphics, TraceNeedsFragmentSideEffects) {
  SimDevice dev(load_sim_preset("adreno-320"), "sim:adreno-320");
  EXPECT_THROW(dev.graphics()->trace_raster(PassDesc{.width = 64, .height = 64}, 1), Unsupported);
}

// Pass times on a noiseless Mali-G52: fragments x ROP clocks / (ROPs x
// cores x clock) plus the pass's fixed cost where the ROPs bound it (the
// tiles' setup and the stores overlap the shading); the rate a probe would
// read from two rectangle counts is the configured one.
TEST(SimGraphics, FillTimesFollowTheConfiguredRates) {
  const SimConfig c = parse_sim_config(noiseless(preset_json("mali-g52")), "mali");
  SimDevice dev(c, "sim:mali");
  const nlohmann::json& r = c.source["raster"];
  const double cores = c.core.shader_cores, ghz = c.clock_ghz(), rops = c.raster.rops_per_core;
  const double units = c.raster.texture_units_per_core;
  const double overhead = c.raster.pass_overhead_ns;
  PassDesc pass{.width = 256, .height = 256};
  const double pixels = 256.0 * 256.0, tiles = 16.0 * 16.0;
  const double tile_ns = tiles * c.raster.tile_overhead_clocks / (cores * ghz);

  auto ns = [&](const PassDesc& p, const Shading& s, uint64_t* frags = nullptr) {
    const FillResult f = dev.graphics()->fill(p, s, 3, false);
    EXPECT_EQ(f.passes.size(), 3u);
    EXPECT_EQ(f.passes[0].ns, f.passes[2].ns);  // noiseless
    if (frags) *frags = f.passes[0].fragments.value();
    return f.passes[0].ns;
  };
  for (const char* fmt : {"rgba8", "rgba16f", "rgba32f"}) {
    PixelFormat f = std::string(fmt) == "rgba8" ? PixelFormat::kRgba8
                    : std::string(fmt) == "rgba16f" ? PixelFormat::kRgba16f
                                                    : PixelFormat::kRgba32f;
    PassDesc p = pass;
    p.colour = {f};
    p.blend = true;  // hidden-surface removal cannot drop blended fragments
    uint64_t frags = 0;
    p.rects = 40;
    const double t40 = ns(p, Shading{}, &frags);
    EXPECT_EQ(frags, static_cast<uint64_t>(pixels) * 40);
    const double rate = value_of(r["rop_blend_pixels_per_clock"][fmt]);
    EXPECT_NEAR(t40, overhead + pixels * 40 / (rate * rops * cores * ghz), 1e-6 * t40) << fmt;
    p.rects = 10;
    const double t10 = ns(p, Shading{});
    const double gpixels = pixels * 30 / (t40 - t10);
    EXPECT_NEAR(gpixels, rate * rops * cores * ghz, 1e-9 * gpixels) << fmt;
  }
  // Without blending, hidden-surface removal shades only the last
  // rectangle: the time and the counted fragments are one rectangle's.
  PassDesc opaque = pass;
  opaque.rects = 40;
  uint64_t frags = 0;
  const double t = ns(opaque, Shading{}, &frags);
  EXPECT_EQ(frags, static_cast<uint64_t>(pixels));
  const double write = value_of(r["rop_pixels_per_clock"]["rgba8"]);
  const double store_ns = pixels * 4 / c.dram_bandwidth_gbps;  // the one attachment stored at the end
  EXPECT_NEAR(t, overhead + std::max({tile_ns, pixels / (write * rops * cores * ghz), store_ns}), 1e-6 * t);

  // Textured: 16 bilinear samples per fragment are texture-bound.
  Shading tex{.textured = true, .filter = TextureFilter::kBilinear, .texture_px = 64, .texture_samples = 16};
  PassDesc tp = pass;
  tp.rects = 1;
  const double tt = ns(tp, tex);
  const double texels = value_of(r["texels_per_clock"]["bilinear"]);
  EXPECT_NEAR(tt, overhead + pixels * 16 / (texels * units * cores * ghz), 1e-6 * tt);

  // What the device lacks, or cannot hold.
  EXPECT_THROW(dev.graphics()->fill(PassDesc{.width = 64, .height = 64, .samples = 8}, Shading{}, 1, false),
               Unsupported);
  EXPECT_THROW(dev.graphics()->fill(PassDesc{.width = 9000, .height = 64}, Shading{}, 1, false), OutOfResources);
  // 8192 x 8192 RGBA32F is 1 GiB, past the preset's 256 MiB allocations.
  EXPECT_THROW(dev.graphics()->fill(PassDesc{.width = 8192, .height = 8192, .colour = {PixelFormat::kRgba32f}},
                                    Shading{}, 1, false),
               OutOfResources);
}

// Mali's forward pixel kill drops an opaque fragment a later opaque one
// covers, whatever colour either writes; a shader that may discard
// (Shading::may_discard) leaves no fragment known opaque, so every
// rectangle's fragments are shaded and the ROPs bound the pass, for colour
// and depth-only passes alike, textured too. The device's count says so.
TEST(SimGraphics, MayDiscardDefeatsHiddenSurfaceRemoval) {
  const SimConfig c = parse_sim_config(noiseless(preset_json("mali-g52")), "mali");
  ASSERT_TRUE(c.raster.binning && c.raster.hidden_surface_removal);
  SimDevice dev(c, "sim:mali");
  const nlohmann::json& r = c.source["raster"];
  const double cores = c.core.shader_cores, ghz = c.clock_ghz(), rops = c.raster.rops_per_core;
  const double pixels = 256.0 * 256.0;
  Shading discard;
  discard.may_discard = true;
  for (const char* fmt : {"rgba8", "depth32f"}) {
    PassDesc p{.width = 256, .height = 256, .rects = 40};
    if (std::string(fmt) == "depth32f") {
      p.colour.clear();
      p.depth = true;
    }
    // Without: one rectangle shaded (the others dropped).
    EXPECT_EQ(model_pass(c, p, Shading{}, false).fragments, static_cast<uint64_t>(pixels)) << fmt;
    const PassModel m = model_pass(c, p, discard, false);
    EXPECT_EQ(m.fragments, static_cast<uint64_t>(pixels) * 40) << fmt;
    const double rate = value_of(r["rop_pixels_per_clock"][fmt]);
    EXPECT_DOUBLE_EQ(m.rop_ns, pixels * 40 / (rate * rops * cores * ghz)) << fmt;
    const FillResult f = dev.graphics()->fill(p, discard, 2, true);
    ASSERT_EQ(f.passes.size(), 2u);
    EXPECT_EQ(f.passes[1].fragments.value(), static_cast<uint64_t>(pixels) * 40) << fmt;
    EXPECT_DOUBLE_EQ(f.passes[1].ns, c.raster.pass_overhead_ns + m.rop_ns) << fmt;  // the ROPs bound it
    // What is written does not change.
    EXPECT_EQ(f.pixels, pass_pixels(p, Shading{})) << fmt;
  }
  const PassDesc tp{.width = 256, .height = 256, .rects = 8};
  Shading tex{.textured = true, .filter = TextureFilter::kPoint, .texture_px = 64, .texture_samples = 1};
  EXPECT_EQ(model_pass(c, tp, tex, false).fragments, static_cast<uint64_t>(pixels));
  tex.may_discard = true;
  EXPECT_EQ(model_pass(c, tp, tex, false).fragments, static_cast<uint64_t>(pixels) * 8);
}

// Adreno bins: more bytes per pixel, smaller bins, more bins, each with its
// fixed cost; with small enough bins the bins' cost bounds the pass.
TEST(SimGraphics, SmallerTilesCostMoreBins) {
  const SimConfig c = parse_sim_config(noiseless(preset_json("adreno-530")), "a530");
  const PassDesc thin{.width = 1024, .height = 1024, .colour = {PixelFormat::kRgba8}};
  const PassDesc fat{.width = 1024, .height = 1024, .colour = {PixelFormat::kRgba32f, PixelFormat::kRgba32f,
                                                              PixelFormat::kRgba32f, PixelFormat::kRgba32f}};
  const PassModel a = model_pass(c, thin, Shading{}, false), b = model_pass(c, fat, Shading{}, false);
  EXPECT_EQ(a.tiles, 16u);        // 256x256 bins
  EXPECT_EQ(b.tiles, 16u * 4u);   // 64 B/px: 128x128 bins
  EXPECT_GT(b.tile_ns, a.tile_ns * 3.9);
  nlohmann::json j = noiseless(preset_json("adreno-530"));
  j["raster"]["tile_overhead_clocks"] = 400000;  // 9.8 ms of bins against 3.2 of ROP and 4.6 of stores
  const SimConfig slow = parse_sim_config(j, "slow-bins");
  const PassModel s = model_pass(slow, fat, Shading{}, false);
  EXPECT_GT(s.tile_ns, s.rop_ns);
  EXPECT_DOUBLE_EQ(s.ns, slow.raster.pass_overhead_ns + s.tile_ns);
}

// An immediate renderer's framebuffer traffic: the shared cache that holds
// the framebuffer serves it, else DRAM.
TEST(SimGraphics, ImmediateTrafficGoesThroughTheCacheThatHoldsIt) {
  nlohmann::json j = noiseless(preset_json("adreno-530"));
  j["raster"]["binning"] = false;
  const SimConfig c = parse_sim_config(j, "immediate");
  const CacheLevelConfig& l2 = c.caches.back();
  ASSERT_FALSE(l2.per_core);
  const PassDesc small{.width = 128, .height = 128, .rects = 4, .blend = true};  // 64 KiB: in the 128 KiB L2
  const PassModel m = model_pass(c, small, Shading{}, false);
  const double bytes = 128.0 * 128 * 4 * (1 + 4 * 2);
  EXPECT_DOUBLE_EQ(m.memory_ns, bytes / (l2.bytes_per_clock * c.clock_ghz()));
  const PassDesc big{.width = 1024, .height = 1024, .rects = 4, .blend = true};
  EXPECT_DOUBLE_EQ(model_pass(c, big, Shading{}, false).memory_ns,
                   1024.0 * 1024 * 4 * (1 + 4 * 2) / c.dram_bandwidth_gbps);
}

TEST(SimGraphics, ReadBackIsWhatTheGpuStores) {
  SimDevice dev(load_sim_preset("adreno-615"), "sim:adreno-615");
  GraphicsFacet& g = *dev.graphics();
  PassDesc p{.width = 8, .height = 4, .rects = 5, .blend = true};
  FillResult f = g.fill(p, Shading{}, 1, true);
  ASSERT_EQ(f.pixels.size(), 8u * 4u * 4u);
  // Additive: channel sums of flat_colour(0..4) in 1/255 steps.
  const std::vector<uint8_t> blended = {5, 2, 2, 5};
  for (size_t px = 0; px < 32; ++px)
    for (size_t ch = 0; ch < 4; ++ch) EXPECT_EQ(static_cast<uint8_t>(f.pixels[px * 4 + ch]), blended[ch]);
  p.blend = false;  // the last rectangle's colour
  f = g.fill(p, Shading{}, 1, true);
  const std::vector<uint8_t> last = {1, 0, 0, 1};
  for (size_t ch = 0; ch < 4; ++ch) EXPECT_EQ(static_cast<uint8_t>(f.pixels[ch]), last[ch]);

  p.colour = {PixelFormat::kRgba32f};
  p.blend = true;
  f = g.fill(p, Shading{}, 1, true);
  ASSERT_EQ(f.pixels.size(), 8u * 4u * 16u);
  float sum = 0;
  for (uint32_t i = 0; i < 5; ++i) sum += flat_colour(i)[0];
  float got;
  std::memcpy(&got, f.pixels.data() + 16 * 31, 4);
  EXPECT_EQ(got, sum);

  p.colour = {PixelFormat::kRgba16f};
  f = g.fill(p, Shading{}, 1, true);
  ASSERT_EQ(f.pixels.size(), 8u * 4u * 8u);
  uint16_t h;
  std::memcpy(&h, f.pixels.data(), 2);
  // 5/255 in half precision: exponent -8 (0x07 biased), rounded mantissa.
  const float expect = 5.0f / 255.0f;
  const float decoded = std::ldexp(1.0f + static_cast<float>(h & 0x3FF) / 1024.0f, static_cast<int>(h >> 10) - 15);
  EXPECT_NEAR(decoded, expect, expect / 256);

  PassDesc depth_only{.width = 4, .height = 4, .colour = {}, .depth = true};
  f = g.fill(depth_only, Shading{}, 1, true);
  ASSERT_EQ(f.pixels.size(), 4u * 4u * 4u);
  for (std::byte b : f.pixels) EXPECT_EQ(b, std::byte{0});
}

// Frames: the true checksum; transaction elimination makes an identical
// redraw cheaper where the description has it; compression makes rendered
// content of one colour per block faster to read once the pattern's blocks
// reach the compression block, and storage writes never.
TEST(SimGraphics, FramesModelEliminationAndCompression) {
  const SimConfig c = parse_sim_config(noiseless(preset_json("mali-g52")), "mali");
  SimDevice dev(c, "sim:mali");
  GraphicsFacet& g = *dev.graphics();
  FrameDesc f{.width = 512, .height = 512, .pattern = FramePattern::kNoise, .seed = 3};
  const FrameTiming first = g.frame(f);
  EXPECT_EQ(first.checksum, frame_checksum(f));
  const FrameTiming same = g.frame(f);
  f.seed = 4;
  const FrameTiming changed = g.frame(f);
  EXPECT_EQ(changed.checksum, frame_checksum(f));
  EXPECT_NE(changed.checksum, first.checksum);
  EXPECT_LT(same.write_ns, 0.9 * changed.write_ns);
  EXPECT_EQ(first.write_ns, changed.write_ns);

  auto read = [&](FramePattern p, uint32_t block, bool storage) {
    return g.frame(FrameDesc{.width = 512, .height = 512, .pattern = p, .block_px = block, .seed = 9,
                             .storage_write = storage})
        .read_ns;
  };
  const uint32_t cb = c.raster.fb_compression_block_px;
  ASSERT_EQ(cb, 16u);
  const double noise = read(FramePattern::kNoise, 1, false);
  EXPECT_EQ(read(FramePattern::kBlocks, cb / 2, false), noise);
  EXPECT_LT(read(FramePattern::kBlocks, cb, false), 0.9 * noise);
  EXPECT_LT(read(FramePattern::kBlocks, 4 * cb, false), 0.9 * noise);
  EXPECT_LT(read(FramePattern::kFlat, 1, false), 0.9 * noise);
  for (FramePattern p : {FramePattern::kFlat, FramePattern::kBlocks, FramePattern::kNoise})
    EXPECT_EQ(read(p, cb, true), noise);  // a storage image is never compressed

  // No elimination on Adreno: an identical redraw costs the same.
  const SimConfig a = parse_sim_config(noiseless(preset_json("adreno-530")), "a530");
  SimDevice adreno(a, "sim:a530");
  FrameDesc af{.width = 512, .height = 512, .pattern = FramePattern::kNoise, .seed = 1};
  adreno.graphics()->frame(af);
  const double again = adreno.graphics()->frame(af).write_ns;
  af.seed = 2;
  EXPECT_EQ(adreno.graphics()->frame(af).write_ns, again);
}
