// The application probes' recorded H100 runs (tests/data), analysed afresh:
// h100/lbm_with_bandwidth.json (probes latency, bandwidth, lbm with
// --budget-scale 2) and h100/sustain_60s.json (probe sustain,
// --sustain-s 60). What the H100 showed must keep being read from them.
#include "support/recorded.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

TEST(RecordedH100Lbm, EveryModeIsBandwidthBoundAgainstTheMeasuredDram) {
  const Results r = load_recorded("h100/lbm_with_bandwidth.json");
  // The same run's DRAM copy rate: 3021 GB/s.
  EXPECT_NEAR(test::finding_value(r, "memory.dram.copy_gbps"), 3021, 30);
  // FP32 on a 128^3 box: 17170 MLUP/s x 153 B = 2627 GB/s, 87% of it.
  EXPECT_NEAR(test::finding_value(r, "app.lbm.fp32.mlups"), 17170, 100);
  EXPECT_NEAR(test::finding_value(r, "app.lbm.fp32.effective_gbps"), 2627, 20);
  EXPECT_NEAR(test::finding_value(r, "app.lbm.fp32.fraction_of_dram"), 0.87, 0.01);
  // The 16-bit modes move half the bytes and run ~1.55x faster: still
  // bandwidth-bound (67-69% of DRAM), FP16C's decoding costs the H100 nothing.
  for (const char* mode : {"fp32", "fp16s", "fp16c"}) {
    const std::string base = std::string("app.lbm.") + mode;
    EXPECT_EQ(test::finding_value(r, base + ".bound"), 1.0) << mode;
    EXPECT_GT(test::finding_value(r, base + ".fraction_of_dram"), 0.6) << mode;
    EXPECT_LT(std::abs(test::finding_value(r, base + ".viscosity_rel_error")), 0.01) << mode;
    EXPECT_LT(std::abs(test::finding_value(r, base + ".mass_rel_error")), 1e-5) << mode;
  }
  EXPECT_GT(test::finding_value(r, "app.lbm.fp16c.mlups"), 1.4 * test::finding_value(r, "app.lbm.fp32.mlups"));
}

TEST(RecordedH100Sustain, SixtySecondsAtFullClockWithoutThrottling) {
  const Results r = load_recorded("h100/sustain_60s.json");
  const Series* tp = r.find_series("sustain.throughput");
  ASSERT_NE(tp, nullptr);
  EXPECT_GE(tp->points.back().x, 59.0);
  // 65 TFLOP/s of FP32 FMA at 1980 MHz for the whole minute.
  EXPECT_NEAR(test::finding_value(r, "sustain.sustained_clock_mhz"), 1980, 5);
  EXPECT_EQ(test::finding_value(r, "sustain.throttling"), 0.0);
  EXPECT_LT(test::finding_value(r, "sustain.drop_fraction"), 0.01);
  EXPECT_LE(test::finding_value(r, "sustain.ramp_ms"), 40);  // up within the first 25 ms launch
  EXPECT_EQ(test::finding_value(r, "sustain.dvfs.clock_drops_between_launches"), 0.0);
  // The driver's view: power from ~124 W idle to ~295 W under load, 38 -> 47 C.
  const Series* power = r.find_series("sustain.driver.power_w");
  ASSERT_NE(power, nullptr);
  EXPECT_GT(power->points.size(), 250u);
  double peak = 0;
  for (const auto& p : power->points) peak = std::max(peak, p.y);
  EXPECT_GT(peak, 250);
  EXPECT_NE(r.find_series("sustain.driver.temperature_c"), nullptr);
}

}  // namespace
}  // namespace gpuscope
