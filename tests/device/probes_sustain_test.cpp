// The sustain probe on PoCL: it runs, validates and yields its curves.
#include "report/results_json.hpp"

#include "support/cli.hpp"
#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuscope {
namespace {

TEST(SustainProbeOnPocl, RunsValidatesAndYieldsItsCurves) {
  const auto dir = test::fresh_temp_dir("pocl_sustain");
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --probes sustain --sustain-s 0.5 --device " + cpu_device_id() + " --out " + dir.string(),
      "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  ASSERT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  const Series* tp = res.find_series("sustain.throughput");
  ASSERT_NE(tp, nullptr);
  EXPECT_GE(tp->points.size(), 5u);
  EXPECT_GE(tp->points.back().x, 0.4);
  EXPECT_LE(tp->points.back().x, 0.6);
  EXPECT_EQ(tp->meta.value("x_scale", std::string()), "linear");  // a time axis, charted linearly
  const Series* gap = res.find_series("sustain.gap.throughput");
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->points.size(), 5u);
  for (const char* id :
       {"sustain.ramp_ms", "sustain.throttling", "sustain.dvfs.clock_drops_between_launches"})
    EXPECT_NE(res.find_finding(id), nullptr) << id;
}

}  // namespace
}  // namespace gpuscope
