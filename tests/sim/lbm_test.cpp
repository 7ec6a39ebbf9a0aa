// The sim's model of lbm.cl: the lbm probe run on simulated devices (the
// presets and the drawn GPUs) must recover the modelled MLUP/s of each
// storage mode within 10%, and its kernels must pass the probe's own checks (one step against the host's,
// the shear wave's viscosity, mass) there as on a real device.
#include "backends/sim/lbm_model.hpp"
#include "backends/sim/sim_config.hpp"
#include "support/cli.hpp"
#include "support/sim_configs.hpp"
#include "report/results_json.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuscope {
namespace {

class LbmSim : public ::testing::TestWithParam<std::string> {};

TEST_P(LbmSim, RecoversTheModelledRates) {
  const std::string name = GetParam();
  const auto dir = test::fresh_temp_dir("sim_lbm_" + name);
  const auto r = test::run_gpuscope("run --quiet --quick --probes lbm --device " + test::sim_device_arg(name, dir) +
                                    " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  ASSERT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  const sim::SimConfig c = test::sim_config_named(name);
  const char* modes[] = {"fp32", "fp16s", "fp16c"};
  for (int m = 0; m < 3; ++m) {
    const Finding* f = res.find_finding(std::string("app.lbm.") + modes[m] + ".mlups");
    ASSERT_NE(f, nullptr) << modes[m];
    const double want = sim::sim_lbm_expected_mlups(c, m);
    EXPECT_NEAR(number(*f) / want, 1.0, 0.10)
        << name << " " << modes[m] << ": " << number(*f) << " vs " << want;
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, LbmSim,
                         ::testing::Values("mali-g52", "adreno-320", "adreno-420", "adreno-530", "adreno-615"),
                         test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, LbmSim, ::testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);

}  // namespace
}  // namespace gpuscope
