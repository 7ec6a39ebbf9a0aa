// The graphics probes against a fake graphics facet (tests/support): each
// probe's series, its host-side checks, its skip reasons, and the findings
// analysis reads from them, which the fake's parameters fix exactly.
#include "analysis/analyze.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "support/fake_graphics_device.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpuscope {
namespace {

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

Results run_all(test::FakeGraphicsDevice& dev) {
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 5.0};
  Results r;
  r.device = dev.info();
  for (auto* probe : {run_raster_probe, run_tilemem_probe, run_rop_probe, run_texfill_probe,
                      run_fbcompress_probe, run_txelim_probe}) {
    auto s = probe(ctx);
    r.series.insert(r.series.end(), s.begin(), s.end());
  }
  return r;
}

TEST(GraphicsProbes, FindWhatTheFakeDeviceDoes) {
  test::FakeGraphicsDevice dev;
  const Results r = run_all(dev);
  EXPECT_TRUE(analysis::unusable_series(r).empty());
  const auto fs = analysis::analyze_all(r);
  const auto value = [&](const std::string& id) {
    const Finding* f = find(fs, id);
    EXPECT_NE(f, nullptr) << id;
    return f ? number(*f) : -1.0;
  };
  EXPECT_EQ(value("graphics.tile.width_px"), 64);
  EXPECT_EQ(value("graphics.tile.height_px"), 64);
  ASSERT_NE(find(fs, "graphics.tile.order"), nullptr);
  EXPECT_EQ(std::get<std::string>(find(fs, "graphics.tile.order")->value), "row-major");
  ASSERT_NE(find(fs, "graphics.binning"), nullptr);
  EXPECT_TRUE(std::get<bool>(find(fs, "graphics.binning")->value));
  EXPECT_EQ(value("graphics.tile.memory_bytes"), 65536);
  for (const char* f : {"rgba8", "rgba16f", "rgba32f"}) {
    EXPECT_NEAR(value(fmt::format("graphics.rop.{}.gpixels", f)), 10, 0.1) << f;
    EXPECT_NEAR(value(fmt::format("graphics.rop.{}.blend.gpixels", f)), 10, 0.1) << f;
  }
  EXPECT_NEAR(value("graphics.rop.depth32f.gpixels"), 10, 0.1);
  for (const char* f : {"point", "bilinear", "trilinear", "aniso"})
    EXPECT_NEAR(value(fmt::format("graphics.texture.{}.gtexels", f)), 40, 0.4) << f;
  EXPECT_EQ(value("graphics.fb_compression.block_px"), 16);
  ASSERT_NE(find(fs, "graphics.transaction_elimination"), nullptr);
  EXPECT_TRUE(std::get<bool>(find(fs, "graphics.transaction_elimination")->value));
  for (const auto& f : fs) EXPECT_TRUE(f.display.known) << f.id;
}

TEST(GraphicsProbes, SkipWithTheirReasons) {
  test::FakeGraphicsDevice dev;
  dev.has_graphics = false;
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 5.0};
  for (auto* probe : {run_raster_probe, run_tilemem_probe, run_rop_probe, run_texfill_probe,
                      run_fbcompress_probe, run_txelim_probe})
    EXPECT_THROW(probe(ctx), Unsupported);
  dev.has_graphics = true;
  dev.facet.side_effects = false;
  try {
    run_raster_probe(ctx);
    ADD_FAILURE() << "raster ran without fragment side effects";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("atomics"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_tilemem_probe(ctx), Unsupported);
  EXPECT_NO_THROW(run_txelim_probe(ctx));
}

// A facet that records one ticket at two pixels is caught.
class DoubleShading : public test::FakeGraphics {
 public:
  RasterTrace trace_raster(const PassDesc& pass, uint32_t stride) override {
    RasterTrace t = FakeGraphics::trace_raster(pass, stride);
    t.ticket[1] = t.ticket[0];
    return t;
  }
};

TEST(GraphicsProbes, ValidationCatchesWrongWork) {
  test::FakeGraphicsDevice dev;
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 5.0};
  dev.facet.gpixels = 10;
  // A wrong frame checksum.
  class WrongFrames : public test::FakeGraphics {
   public:
    FrameTiming frame(const FrameDesc& f) override {
      FrameTiming t = FakeGraphics::frame(f);
      t.checksum += 1;
      return t;
    }
  };
  struct Dev : test::FakeGraphicsDevice {
    GraphicsFacet* inner = nullptr;
    GraphicsFacet* graphics() override { return inner; }
  };
  Dev twice;
  DoubleShading ds;
  twice.inner = &ds;
  ProbeContext c2{twice, opts, 5.0};
  EXPECT_THROW(run_raster_probe(c2), ValidationError);
  WrongFrames wf;
  twice.inner = &wf;
  EXPECT_THROW(run_fbcompress_probe(c2), ValidationError);
  EXPECT_THROW(run_txelim_probe(c2), ValidationError);
}

// A tiler with forward pixel kill: a pass that neither blends nor (where
// `honours_discard`) may discard shades, times and counts only its last
// rectangle's fragments.
class PixelKill : public test::FakeGraphics {
 public:
  bool honours_discard = true;
  FillResult fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) override {
    FillResult r = FakeGraphics::fill(pass, shading, passes, read_back);
    if (!pass.blend && !(honours_discard && shading.may_discard))
      for (PassTiming& t : r.passes) {
        t.fragments = uint64_t{pass.width} * pass.height;
        t.ns /= pass.rects;
      }
    return r;
  }
};

// rop shades with may_discard, so pixel kill cannot drop its overdraw and
// the unblended rates are the ROPs'; a device that dropped fragments anyway
// is caught by the fragment count rather than reported as a rate
// `rects` times too high.
TEST(GraphicsProbes, RopOverdrawSurvivesPixelKill) {
  struct Dev : test::FakeGraphicsDevice {
    PixelKill kill;
    GraphicsFacet* graphics() override { return &kill; }
  };
  Dev dev;
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 5.0};
  Results r;
  r.device = dev.info();
  r.series = run_rop_probe(ctx);
  const auto fs = analysis::analyze_all(r);
  for (const char* id : {"graphics.rop.rgba8.gpixels", "graphics.rop.rgba32f.gpixels",
                         "graphics.rop.depth32f.gpixels", "graphics.rop.rgba8.blend.gpixels"}) {
    const Finding* f = find(fs, id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_NEAR(number(*f), 10, 0.1) << id;
  }
  dev.kill.honours_discard = false;
  EXPECT_THROW(run_rop_probe(ctx), ValidationError);
}

}  // namespace
}  // namespace gpuscope
