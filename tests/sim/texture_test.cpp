// Recovery tests of the texture probe on the sim presets (issue 7): the
// texture path's cache levels, capacities and latencies, its bandwidth and
// whether its first level also serves loads must come back as the
// description put them. Expected values are read from the description by its
// own meaning (a level's path, a per-core rate counts once per core), not
// from family_texture.cpp.
#include "analysis/analyze.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>
#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <variant>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

// The modelled rate (GB/s) of independent fetches over `footprint` bytes:
// the slowest texture-path level down to the one holding it (a per-core
// level once per core), then DRAM when none does.
double modelled_rate(const SimConfig& c, double footprint) {
  double rate = INFINITY;
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::texture)) {
    rate = std::min(rate, lv->bytes_per_clock * c.clock_ghz() * (lv->per_core ? c.core.shader_cores : 1));
    if (footprint <= static_cast<double>(lv->capacity_bytes)) return rate;
  }
  return std::min(rate, c.dram_bandwidth_gbps);
}

// The staircase inference needs a sweep to 64 MiB to call its last plateau
// DRAM (analysis/cache_hierarchy.hpp); a shorter sweep (Mali's 1 MiB 1D
// images) reports it as one more level whose end was not reached.
constexpr double kDramSweepBytes = 64.0 * 1024 * 1024;

}  // namespace

class SimTextureRecovery : public testing::TestWithParam<std::string> {};

// texture.cache_levels: the levels on the texture path the sweep can see
// (expected_chase on that path: a TLB whose reach is inside the sweep is a
// step, as on the load path); each level's capacity within 10% (a TLB step
// within [reach, 2.5 reach], config_latency_test.cpp's reasoning) and latency within
// 5%; texture.bandwidth_gbps within 5% of the fastest modelled rate over the
// footprints the probe measured; texture.shares_l1 exactly (the first
// texture-path level also serves loads).
TEST_P(SimTextureRecovery, LevelsBandwidthAndSharing) {
  nlohmann::json j = test::sim_config_named(GetParam()).source;
  j["memory"]["max_alloc_bytes"] = 64 << 20;
  const SimConfig c = parse_sim_config(j, GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 30.0};
  Results r;
  r.device = dev.info();
  r.series = run_texture_probe(ctx);
  const auto fs = analysis::analyze_all(r);

  const Series* latency = r.find_series("texture.latency");
  ASSERT_NE(latency, nullptr);
  const double max_footprint = latency->meta.at("max_footprint_bytes").get<double>();
  const ExpectedChase want = expected_chase(c, max_footprint, CachePath::texture);
  const Finding* levels = test::find_finding(fs, "texture.cache_levels");
  ASSERT_NE(levels, nullptr);

  std::string table = fmt::format("texture {} ({}, sweep to {:.0f} KiB)\n", c.id_name,
                                  latency->meta.at("image").get<std::string>(), max_footprint / 1024);
  table += fmt::format("  cache_levels configured {}, recovered {:.0f}\n", want.levels.size(), number(*levels));
  for (size_t i = 0; i < want.levels.size(); ++i) {
    const auto& w = want.levels[i];
    const Finding* cap = test::find_finding(fs, fmt::format("texture.L{}.capacity_bytes", i + 1));
    const Finding* lat = test::find_finding(fs, fmt::format("texture.L{}.latency_ns", i + 1));
    table += fmt::format("  L{} ({}) capacity configured {:.0f} B, recovered {}; latency configured {:.1f} ns, "
                         "recovered {}\n",
                         i + 1, w.label, w.capacity_bytes, cap ? fmt::format("{:.0f}", number(*cap)) : "-",
                         w.latency_ns, lat ? fmt::format("{:.1f}", number(*lat)) : "-");
  }
  double peak = 0;
  if (const Series* bw = r.find_series("texture.bandwidth"))
    for (const Point& p : bw->points) peak = std::max(peak, modelled_rate(c, p.x));
  const Finding* bandwidth = test::find_finding(fs, "texture.bandwidth_gbps");
  table += fmt::format("  bandwidth configured {:.2f} GB/s, recovered {}\n", peak,
                       bandwidth ? fmt::format("{:.2f}", number(*bandwidth)) : "-");
  const auto first = c.path_levels(CachePath::texture).front();
  const bool shares = first->serves_loads();
  const Finding* sharing = test::find_finding(fs, "texture.shares_l1");
  table += fmt::format("  shares_l1 configured {}, recovered {}\n", shares,
                       sharing ? (std::get<bool>(sharing->value) ? "true" : "false") : "-");
  std::printf("%s", table.c_str());

  const bool short_sweep = max_footprint < kDramSweepBytes;
  EXPECT_EQ(number(*levels), static_cast<double>(want.levels.size() + (short_sweep ? 1 : 0))) << table;
  if (short_sweep) {
    const Finding* last = test::find_finding(fs, fmt::format("texture.L{}.latency_ns", want.levels.size() + 1));
    ASSERT_NE(last, nullptr) << table;
    std::printf("  (sweep below 64 MiB: DRAM reported as L%zu, configured %.1f ns, recovered %.1f)\n",
                want.levels.size() + 1, want.beyond_latency_ns, number(*last));
    EXPECT_NEAR(number(*last) / want.beyond_latency_ns, 1.0, 0.05) << table;
  }
  for (size_t i = 0; i < want.levels.size(); ++i) {
    const auto& w = want.levels[i];
    const Finding* cap = test::find_finding(fs, fmt::format("texture.L{}.capacity_bytes", i + 1));
    const Finding* lat = test::find_finding(fs, fmt::format("texture.L{}.latency_ns", i + 1));
    ASSERT_TRUE(cap && lat) << table;
    if (w.is_tlb) {
      EXPECT_GE(number(*cap), 0.9 * w.capacity_bytes) << table;
      EXPECT_LE(number(*cap), 2.5 * w.capacity_bytes) << table;
    } else {
      EXPECT_NEAR(number(*cap) / w.capacity_bytes, 1.0, 0.10) << "L" << i + 1 << "\n" << table;
    }
    EXPECT_NEAR(number(*lat) / w.latency_ns, 1.0, 0.05) << "L" << i + 1 << "\n" << table;
  }
  ASSERT_NE(bandwidth, nullptr) << table;
  EXPECT_NEAR(number(*bandwidth) / peak, 1.0, 0.05) << table;
  ASSERT_NE(sharing, nullptr) << table;
  EXPECT_EQ(std::get<bool>(sharing->value), shares) << sharing->note << "\n" << table;
}

INSTANTIATE_TEST_SUITE_P(Presets, SimTextureRecovery, testing::ValuesIn(test::kSimPresets), test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, SimTextureRecovery, testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);
