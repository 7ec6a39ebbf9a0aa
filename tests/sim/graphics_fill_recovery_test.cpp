// Recovery tests of the fill-rate probes on the sim presets (issue 15):
// every configured ROP rate (colour formats blended and not, depth32f) comes
// back within 5% on a tiler whose hidden-surface removal would drop opaque
// overdraw (Mali-G52) as on those without it (Adreno), including those
// whose slow memory makes a pass's store outlast a rectangle's fill
// (Adreno 320, 420: RGBA32F at 2 GB/s); and every texture rate.
// Expected values are read from the description by its meaning: a ROP's
// pixels per clock x ROPs per core x cores x clock; a texture unit's
// filtered samples per clock x units per core x cores x clock.
#include "analysis/analyze.hpp"
#include "analysis/graphics.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/graphics/graphics_probes.hpp"

#include "support/sim_configs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

double value_of(const nlohmann::json& v) { return v.is_object() ? v.at("value").get<double>() : v.get<double>(); }

}  // namespace

class SimRopRecovery : public testing::TestWithParam<std::string> {};
class SimTextureFillRecovery : public testing::TestWithParam<std::string> {};

// graphics.rop.<format>[.blend].gpixels within 5% of the configured rate,
// and the device's count of fragments every pixel of every rectangle (no
// rectangle dropped as hidden).
TEST_P(SimRopRecovery, RatesByFormatAndBlend) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  Results r = test::run_sim_probe(dev, run_rop_probe, true);
  const auto fs = analysis::analyze_all(r);
  const nlohmann::json& raster = c.source.at("raster");
  const double per_clock = value_of(raster.at("rops_per_core")) * c.core.shader_cores * c.clock_ghz();

  struct Want {
    std::string id;
    double gpixels;
  };
  std::vector<Want> want;
  for (const auto& [format, rate] : raster.at("rop_pixels_per_clock").items())
    want.push_back({fmt::format("graphics.rop.{}.gpixels", format), value_of(rate) * per_clock});
  for (const auto& [format, rate] : raster.at("rop_blend_pixels_per_clock").items())
    want.push_back({fmt::format("graphics.rop.{}.blend.gpixels", format), value_of(rate) * per_clock});
  ASSERT_EQ(want.size(), 7u);  // rgba8, rgba16f, rgba32f, each blended and not, and depth32f

  std::string table = fmt::format("rop {} (hidden-surface removal {})\n", c.id_name,
                                  c.raster.binning && c.raster.hidden_surface_removal ? "on" : "off");
  for (const Want& w : want) {
    const Finding* f = test::find_finding(fs, w.id);
    table += fmt::format("  {:<32} configured {:7.3f}, recovered {}\n", w.id, w.gpixels,
                         f ? fmt::format("{:7.3f}", number(*f)) : "-");
  }
  std::printf("%s", table.c_str());
  for (const Want& w : want) {
    const Finding* f = test::find_finding(fs, w.id);
    ASSERT_NE(f, nullptr) << w.id << "\n" << table;
    EXPECT_NEAR(number(*f) / w.gpixels, 1.0, 0.05) << w.id << "\n" << table;
  }
  for (const Series& s : r.series) {
    if (!s.id.starts_with(analysis::kRopSeriesPrefix)) continue;
    ASSERT_EQ(s.meta.at("fragments_counted").is_number(), c.raster.pipeline_statistics) << s.id;
    if (!c.raster.pipeline_statistics) continue;
    EXPECT_EQ(s.meta.at("fragments_counted").get<double>(), s.meta.at("fragments_drawn").get<double>()) << s.id;
  }
}

// graphics.texture.<filter>.gtexels within 5% of the configured rate.
TEST_P(SimTextureFillRecovery, RatesByFilter) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  Results r = test::run_sim_probe(dev, run_texfill_probe, true);
  const auto fs = analysis::analyze_all(r);
  const nlohmann::json& raster = c.source.at("raster");
  const double per_clock = value_of(raster.at("texture_units_per_core")) * c.core.shader_cores * c.clock_ghz();
  size_t checked = 0;
  for (const auto& [filter, rate] : raster.at("texels_per_clock").items()) {
    const std::string id = fmt::format("graphics.texture.{}.gtexels", filter);
    const Finding* f = test::find_finding(fs, id);
    ASSERT_NE(f, nullptr) << id;
    const double want = value_of(rate) * per_clock;
    std::printf("texfill %s %-32s configured %7.3f, recovered %7.3f\n", c.id_name.c_str(), id.c_str(), want,
                number(*f));
    EXPECT_NEAR(number(*f) / want, 1.0, 0.05) << id;
    ++checked;
  }
  EXPECT_EQ(checked, 4u);  // point, bilinear, trilinear, aniso
}

INSTANTIATE_TEST_SUITE_P(Presets, SimRopRecovery, testing::ValuesIn(test::kSimPresets), test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Presets, SimTextureFillRecovery, testing::ValuesIn(test::kSimPresets),
                         test::sim_test_name);
