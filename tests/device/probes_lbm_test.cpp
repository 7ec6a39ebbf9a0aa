// The lattice Boltzmann probe on PoCL: its kernels against the host step,
// and the physics they must keep.
#include "report/results_json.hpp"

#include "support/cli.hpp"
#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace gpuscope {
namespace {

TEST(LbmProbeOnPocl, KernelsMatchTheHostAndThePhysicsHolds) {
  const auto dir = test::fresh_temp_dir("pocl_lbm");
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --quick --probes lbm --device " + cpu_device_id() + " --out " + dir.string(),
      "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  ASSERT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  for (const char* mode : {"fp32", "fp16s", "fp16c"}) {
    const Series* s = res.find_series(std::string("lbm.") + mode);
    ASSERT_NE(s, nullptr) << mode;
    ASSERT_FALSE(s->points.empty());
    EXPECT_GT(s->points.front().y, 0);
    const auto& ph = s->meta["physics"];
    EXPECT_LE(std::abs(ph["nu_rel_error"].get<double>()), 0.01) << mode;
    EXPECT_LE(std::abs(ph["mass_rel_error"].get<double>()), 1e-5) << mode;
    const std::string base = std::string("app.lbm.") + mode;
    ASSERT_NE(res.find_finding(base + ".mlups"), nullptr);
    ASSERT_NE(res.find_finding(base + ".bound"), nullptr);
    EXPECT_DOUBLE_EQ(s->meta["bytes_per_cell_update"].get<double>(), std::string(mode) == "fp32" ? 153 : 77);
  }
}

}  // namespace
}  // namespace gpuscope
