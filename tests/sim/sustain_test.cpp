// The sim's clock governor (sim_config.hpp's GovernorConfig, which
// family_sustain.cpp's model of sustain.cl runs under): the sustain probe on
// each preset and drawn GPU must recover the assumed governor: the ramp (the instant the
// clock passes 95% of its peak lies in the ramp finding's interval, within
// 10%), the throttled fraction and the onset (half the drop) within 10%, and
// the shortest probed idle gap that drops the clock.
#include "backends/sim/sim_config.hpp"
#include "support/cli.hpp"
#include "support/sim_configs.hpp"
#include "report/results_json.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuscope {
namespace {

class GovernorSim : public ::testing::TestWithParam<std::string> {};

TEST_P(GovernorSim, SustainRecoversTheGovernor) {
  const std::string name = GetParam();
  const sim::SimConfig c = test::sim_config_named(name);
  const sim::GovernorConfig& g = c.governor;
  ASSERT_TRUE(g.present);
  const double load_s = g.throttle_after_s + g.throttle_ramp_s + 10;
  const auto dir = test::fresh_temp_dir("sim_sustain_" + name);
  const auto r = test::run_gpuscope("run --quiet --probes sustain --sustain-s " + std::to_string(load_s) +
                                    " --device " + test::sim_device_arg(name, dir) + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  ASSERT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  const auto get = [&](const std::string& id) {
    const Finding* f = res.find_finding(id);
    EXPECT_NE(f, nullptr) << id;
    return f ? *f : Finding{};
  };
  // The clock passes 95% of core.clock_mhz this long after leaving idle.
  const double up_ms = g.ramp_ms * (0.95 * c.core.clock_mhz - g.idle_mhz) / (c.core.clock_mhz - g.idle_mhz);
  const Finding ramp = get("sustain.ramp_ms");
  ASSERT_TRUE(ramp.low && ramp.high);
  EXPECT_GE(up_ms, 0.9 * *ramp.low) << name;
  EXPECT_LE(up_ms, 1.1 * *ramp.high) << name;
  EXPECT_TRUE(std::get<bool>(get("sustain.throttling").value)) << name;
  EXPECT_NEAR(number(get("sustain.drop_fraction")) / (1 - g.throttled_fraction), 1.0, 0.1) << name;
  EXPECT_NEAR(number(get("sustain.throttle_onset_s")) / (g.throttle_after_s + g.throttle_ramp_s / 2), 1.0,
              0.1)
      << name;
  EXPECT_TRUE(std::get<bool>(get("sustain.dvfs.clock_drops_between_launches").value)) << name;
  double first_gap = 0;
  for (double gap : {1.0, 10.0, 100.0, 300.0})
    if (gap >= g.idle_after_ms) {
      first_gap = gap;
      break;
    }
  EXPECT_DOUBLE_EQ(number(get("sustain.dvfs.drop_after_gap_ms")), first_gap) << name;
}

INSTANTIATE_TEST_SUITE_P(Presets, GovernorSim,
                         ::testing::Values("mali-g52", "adreno-320", "adreno-420", "adreno-530", "adreno-615"),
                         test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, GovernorSim, ::testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);

}  // namespace
}  // namespace gpuscope
