// Recovery of the graphics half through the sim (issue 15): the raster,
// tilemem, fbcompress and txelim probes run end to end on every preset (the
// ones with a raster section), and the analysis must give back what the description put in:
// the tile at 4 B per pixel, its walk and binning exactly, the tile memory
// where the layouts reach past its knee, the compression block and
// transaction elimination. Expected values come from the description's own
// meaning (raster_model.hpp's effective_tile), not from the probes' code.
#include "analysis/graphics.hpp"
#include "backends/sim/raster_model.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/graphics/graphics_probes.hpp"

#include "support/findings.hpp"
#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <variant>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::vector<Finding> graphics_of(SimDevice& dev, std::vector<Series> (*probe)(ProbeContext&)) {
  return analysis::graphics_findings(test::run_sim_probe(dev, probe, false));
}

// The largest bytes per pixel the tilemem probe's layouts reach on `c`
// (its plan: up to 8 RGBA32F attachments, 4 and 8 samples where allowed).
uint64_t largest_layout_bytes(const RasterConfig& r) {
  uint64_t best = 16;
  for (uint32_t n : {2u, 4u, 8u})
    if (n <= r.max_colour_attachments) best = std::max<uint64_t>(best, 16u * n);
  const uint32_t most = r.max_colour_attachments >= 8 ? 8 : 4;
  if (r.max_colour_attachments >= 4)
    for (uint32_t s : r.sample_counts)
      if (s == 4 || s == 8) best = std::max<uint64_t>(best, uint64_t{16} * most * s);
  return best;
}

}  // namespace

class SimGraphicsRecovery : public testing::TestWithParam<std::string> {};

// The tile, its walk and binning from the raster probe; the tile memory
// from tilemem's knee.
TEST_P(SimGraphicsRecovery, TileWalkBinningAndTileMemory) {
  const SimConfig c = test::sim_config_named(GetParam());
  const RasterConfig& r = c.raster;
  SimDevice dev(c, "sim:" + c.id_name);
  if (!r.fragment_side_effects) {
    EXPECT_THROW(graphics_of(dev, run_raster_probe), Unsupported) << "no fragment atomics: raster is skipped";
    EXPECT_THROW(graphics_of(dev, run_tilemem_probe), Unsupported);
    return;
  }
  const std::vector<Finding> fs = graphics_of(dev, run_raster_probe);
  const TileSize tile = effective_tile(r, 4);
  const Finding* w = find(fs, "graphics.tile.width_px");
  const Finding* h = find(fs, "graphics.tile.height_px");
  const Finding* o = find(fs, "graphics.tile.order");
  const Finding* b = find(fs, "graphics.binning");
  ASSERT_TRUE(w && h && o && b) << c.id_name;
  std::printf("graphics %s: tile %ux%u %s binning %d; read %gx%g (%.2f, %.2f) %s (%.2f) binning %d (%.2f)\n",
              c.id_name.c_str(), tile.width_px, tile.height_px, std::string(tile_order_name(r.tile_order)).c_str(),
              r.binning, number(*w), number(*h), w->confidence, h->confidence,
              std::get<std::string>(o->value).c_str(), o->confidence, std::get<bool>(b->value), b->confidence);
  EXPECT_EQ(number(*w), tile.width_px);
  EXPECT_EQ(number(*h), tile.height_px);
  EXPECT_GE(std::min(w->confidence, h->confidence), 0.8);
  EXPECT_EQ(std::get<std::string>(o->value), tile_order_name(r.tile_order));
  EXPECT_EQ(std::get<bool>(b->value), r.binning);
  EXPECT_GE(b->confidence, 0.8);

  const std::vector<Finding> mem = graphics_of(dev, run_tilemem_probe);
  const Finding* m = find(mem, "graphics.tile.memory_bytes");
  // The knee lies within the probe's layouts where the largest of them no
  // longer fits the full tile.
  const bool knee = r.tile_memory_bytes > 0 && largest_layout_bytes(r) * tile.pixels() > r.tile_memory_bytes;
  if (knee) {
    ASSERT_NE(m, nullptr) << c.id_name;
    std::printf("graphics %s: tile memory %llu B, read %g (%.2f)\n", c.id_name.c_str(),
                static_cast<unsigned long long>(r.tile_memory_bytes), number(*m), m->confidence);
    EXPECT_EQ(number(*m), static_cast<double>(r.tile_memory_bytes));
  } else if (m) {
    EXPECT_LT(m->confidence, 0.8) << "no knee within the layouts, yet " << number(*m);
  }
}

// The compression block exactly, and transaction elimination as described.
TEST_P(SimGraphicsRecovery, CompressionBlockAndTransactionElimination) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const std::vector<Finding> fb = graphics_of(dev, run_fbcompress_probe);
  const Finding* block = find(fb, "graphics.fb_compression.block_px");
  if (c.raster.fb_compression_block_px > 0) {
    ASSERT_NE(block, nullptr) << c.id_name;
    EXPECT_EQ(number(*block), c.raster.fb_compression_block_px);
  } else {
    EXPECT_EQ(block, nullptr) << c.id_name << " has no compression";
  }
  const std::vector<Finding> te = graphics_of(dev, run_txelim_probe);
  const Finding* t = find(te, "graphics.transaction_elimination");
  ASSERT_NE(t, nullptr) << c.id_name;
  EXPECT_EQ(std::get<bool>(t->value), c.raster.transaction_elimination);
}

INSTANTIATE_TEST_SUITE_P(Presets, SimGraphicsRecovery, testing::ValuesIn(test::kSimPresets), test::sim_test_name);
