// The divergence, occupancy and icache probes end to end on the CPU through
// PoCL (the quick forms CI runs): every kernel validated, every series
// shaped as the analysis expects, findings present and honest about a CPU.
// No timed assertions: the CI machine is shared and noisy.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuscope {
namespace {

TEST(ExecutionProbesOnPocl, QuickRunGivesSeriesAndFindings) {
  const std::string id = cpu_device_id();
  ASSERT_FALSE(id.empty());
  const auto dir = test::fresh_temp_dir("pocl_exec");
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --quick --probes divergence,occupancy,icache --device " + id + " --out " + dir.string(),
      "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << res.skipped.front().reason;

  for (const char* sid : {"divergence.blocks", "occupancy.registers", "occupancy.waves", "occupancy.local",
                          "icache.body", "icache.binary"}) {
    const Series* s = res.find_series(sid);
    ASSERT_NE(s, nullptr) << sid;
    EXPECT_GE(s->points.size(), 2u) << sid;
    for (const auto& p : s->points) {
      EXPECT_GT(p.y, 0) << sid << " at " << p.x;
      EXPECT_FALSE(p.samples.empty()) << sid;
    }
  }
  // Blocks of 1, 2, 4, ... work-items up to the work-group.
  EXPECT_EQ(res.find_series("divergence.blocks")->points.front().x, 1);

  // The wave width is read; where the curve is flat (a CPU running
  // work-items one by one) it says 1 and no more than a guess.
  const Finding* w = res.find_finding("exec.wave_width");
  ASSERT_NE(w, nullptr);
  EXPECT_GE(number(*w), 1);
  if (number(*w) == 1) EXPECT_LT(w->confidence, 0.5);

  const Finding* cb = res.find_finding("exec.code_bytes_per_op");
  ASSERT_NE(cb, nullptr);
  EXPECT_GT(number(*cb), 1);
  EXPECT_LT(number(*cb), 200);
  EXPECT_EQ(res.find_series("icache.binary")->meta.value("binary_format", ""), "pocl");
  EXPECT_NE(res.find_finding("exec.icache_ops"), nullptr);
  EXPECT_NE(res.find_finding("exec.registers.occupancy_cliffs"), nullptr);
}

}  // namespace
}  // namespace gpuscope
