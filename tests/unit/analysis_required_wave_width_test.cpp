// Wave widths measured per required subgroup size
// (analysis::required_wave_width_findings, and analyze() picking up every
// divergence.blocks.subgroup_<n> series), on made-up block sweeps.
#include "analysis/analyze.hpp"
#include "analysis/execution.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope {
namespace {

// Throughput halves below `width` work-items per block.
Series sweep(const std::string& id, double width, int required) {
  Series s;
  s.id = id;
  s.probe = "divergence";
  if (required > 0) s.meta["required_subgroup_size"] = required;
  for (double b = 1; b <= 256; b *= 2) {
    Point p;
    p.x = b;
    p.y = b >= width ? 100.0 : 50.0;
    for (int k = 0; k < 5; ++k) p.samples.push_back(p.y * (1 + 0.004 * std::sin(1.3 * b + k)));
    s.points.push_back(p);
  }
  return s;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(RequiredWaveWidth, MeasuredWidthUnderEachRequest) {
  for (int w : {8, 16, 32, 64, 128}) {
    const auto fs = analysis::required_wave_width_findings(sweep("divergence.blocks.subgroup_x", w, w));
    const Finding* width = find(fs, "exec.wave_width.subgroup_" + std::to_string(w));
    ASSERT_NE(width, nullptr) << w;
    EXPECT_EQ(number(*width), w);
    const Finding* agrees = find(fs, "exec.wave_width.subgroup_" + std::to_string(w) + ".as_required");
    ASSERT_NE(agrees, nullptr);
    EXPECT_TRUE(std::get<bool>(agrees->value));
  }
}

// A driver that accepts the request but runs another width: said, not hidden.
TEST(RequiredWaveWidth, ARequestTheHardwareIgnoredIsReported) {
  const auto fs = analysis::required_wave_width_findings(sweep("divergence.blocks.subgroup_64", 32, 64));
  const Finding* width = find(fs, "exec.wave_width.subgroup_64");
  ASSERT_NE(width, nullptr);
  EXPECT_EQ(number(*width), 32);
  EXPECT_FALSE(std::get<bool>(find(fs, "exec.wave_width.subgroup_64.as_required")->value));
}

TEST(RequiredWaveWidth, NoRequestInTheMetaGivesNoFinding) {
  EXPECT_TRUE(analysis::required_wave_width_findings(sweep("divergence.blocks.subgroup_8", 8, 0)).empty());
}

// analyze() reads every per-size sweep beside the plain one (Intel-like: 8, 16, 32).
TEST(RequiredWaveWidth, AnalyzeFindsEverySize) {
  Results r;
  r.device.type = "gpu";
  r.series.push_back(sweep("divergence.blocks", 16, 0));
  for (int w : {8, 16, 32}) r.series.push_back(sweep("divergence.blocks.subgroup_" + std::to_string(w), w, w));
  const auto fs = analysis::analyze_all(r);
  ASSERT_NE(find(fs, "exec.wave_width"), nullptr);
  EXPECT_EQ(number(*find(fs, "exec.wave_width")), 16);
  for (int w : {8, 16, 32}) {
    const Finding* f = find(fs, "exec.wave_width.subgroup_" + std::to_string(w));
    ASSERT_NE(f, nullptr) << w;
    EXPECT_EQ(number(*f), w);
  }
}

}  // namespace
}  // namespace gpuscope
