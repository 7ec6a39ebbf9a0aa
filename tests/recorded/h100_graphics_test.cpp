// The H100's graphics half measured through Vulkan
// (tests/data/h100/graphics_vulkan.json), re-analysed: the fill rates the
// run reported, the ordering of formats a ROP's width implies, the trace
// read as small blocks with no binning, and no finding the data cannot
// carry (no compression block where compute reads show none).
#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope {
namespace {

using test::find_finding;
using test::finding_value;

class H100Graphics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = new Results(load_recorded("h100/graphics_vulkan.json")); }
  static void TearDownTestSuite() { delete run_; }
  static Results* run_;
};
Results* H100Graphics::run_ = nullptr;

TEST_F(H100Graphics, FillRatesAreThoseMeasured) {
  EXPECT_NEAR(finding_value(*run_, "graphics.rop.rgba8.gpixels"), 13.86, 0.05);
  EXPECT_NEAR(finding_value(*run_, "graphics.rop.rgba16f.gpixels"), 6.84, 0.05);
  EXPECT_NEAR(finding_value(*run_, "graphics.texture.bilinear.gtexels"), 30.90, 0.05);
  // Wider pixels fill slower, blending never faster.
  EXPECT_GT(finding_value(*run_, "graphics.rop.rgba8.gpixels"), finding_value(*run_, "graphics.rop.rgba16f.gpixels"));
  EXPECT_GT(finding_value(*run_, "graphics.rop.rgba16f.gpixels"), finding_value(*run_, "graphics.rop.rgba32f.gpixels"));
  for (const char* f : {"rgba8", "rgba16f", "rgba32f"})
    EXPECT_LE(finding_value(*run_, std::string("graphics.rop.") + f + ".blend.gpixels"),
              finding_value(*run_, std::string("graphics.rop.") + f + ".gpixels"))
        << f;
  // Trilinear reads two levels: half bilinear's rate.
  EXPECT_NEAR(finding_value(*run_, "graphics.texture.trilinear.gtexels") /
                  finding_value(*run_, "graphics.texture.bilinear.gtexels"),
              0.5, 0.05);
}

TEST_F(H100Graphics, TraceReadsSmallBlocksAndNoBinning) {
  const Finding* binning = find_finding(run_->findings, "graphics.binning");
  ASSERT_NE(binning, nullptr);
  EXPECT_FALSE(std::get<bool>(binning->value)) << binning->note;
  EXPECT_LE(finding_value(*run_, "graphics.tile.width_px") * finding_value(*run_, "graphics.tile.height_px"), 64);
  EXPECT_EQ(find_finding(run_->findings, "graphics.fb_compression.block_px"), nullptr);
  // An immediate renderer's blocks vary with the pixel size: no tile memory.
  EXPECT_EQ(find_finding(run_->findings, "graphics.tile.memory_bytes"), nullptr);
}

}  // namespace
}  // namespace gpuscope
