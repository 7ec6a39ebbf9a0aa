// The lattice Boltzmann mini-app: its storage formats and host step
// (core/lbm_lattice.hpp) and its analysis (analysis/application.hpp) on
// made-up series; tests/device/probes_lbm_test.cpp runs the probe on PoCL.
#include "analysis/application.hpp"
#include "core/lbm_lattice.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope {
namespace {

using lbm::Storage;

TEST(LbmFormats, HalfMatchesIeeeRoundToNearestEven) {
  EXPECT_EQ(lbm::float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(lbm::float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(lbm::float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(lbm::float_to_half(65520.0f), 0x7c00);            // rounds to infinity
  EXPECT_EQ(lbm::float_to_half(1.0f + 1.0f / 2048), 0x3c00);  // a tie goes to the even mantissa
  EXPECT_EQ(lbm::float_to_half(1.0f + 3.0f / 2048), 0x3c02);  // ... up here
  EXPECT_EQ(lbm::float_to_half(5.9604645e-8f), 0x0001);       // smallest subnormal
  for (uint32_t h = 0; h < 0x7c00; ++h) EXPECT_EQ(lbm::float_to_half(lbm::half_to_float(uint16_t(h))), h);
}

TEST(LbmFormats, Fp16cRoundTripsAndHasElevenMantissaBits) {
  for (uint32_t h = 0; h <= 0x7fff; ++h) {
    const float v = lbm::fp16c_to_float(uint16_t(h));
    ASSERT_EQ(lbm::float_to_fp16c(v), h) << h;
    ASSERT_EQ(lbm::float_to_fp16c(-v), h | 0x8000u) << h;  // -0 keeps its sign
  }
  EXPECT_EQ(lbm::fp16c_to_float(0x0800), std::ldexp(1.0f, -14));
  EXPECT_EQ(lbm::fp16c_to_float(0x7800), 1.0f);
  EXPECT_EQ(lbm::float_to_fp16c(100.0f), 0x7fff);  // saturates
  // Relative error of a stored population: at most half an ulp, 2^-12.
  for (float v = 1e-4f; v < 1.9f; v *= 1.013f)
    EXPECT_LE(std::abs(lbm::decode(Storage::fp16c, lbm::encode(Storage::fp16c, v)) / v - 1), 1.0 / 4096) << v;
}

TEST(LbmHost, StepConservesMassAndMomentum) {
  for (Storage s : {Storage::fp32, Storage::fp16s, Storage::fp16c}) {
    lbm::Box a = lbm::equilibrium_box(8, 6, 5, s, [](uint32_t x, uint32_t y, uint32_t z) {
      return lbm::CellState{0.01f * std::sin(float(x + 2 * z)), 0.04f * std::cos(float(y)), 0.02f,
                            -0.03f * std::sin(float(x))};
    });
    const double m0 = lbm::mass(a);
    double px0 = 0;
    for (double v : lbm::momentum_x(a)) px0 += v;
    lbm::Box b;
    for (int t = 0; t < 20; ++t) {
      lbm::step(a, b, 1.0f / 0.9f);
      std::swap(a, b);
    }
    double px = 0;
    for (double v : lbm::momentum_x(a)) px += v;
    const double tol = s == Storage::fp32 ? 1e-6 : 1e-4;
    EXPECT_NEAR(lbm::mass(a) / m0, 1.0, tol) << lbm::storage_name(s);
    EXPECT_NEAR(px, px0, tol * a.cells()) << lbm::storage_name(s);
  }
}

// Boxes of 32^3, 128^3 and 256^3 cells at half, 0.95x and all of `mlups`:
// a rate levelled off with the box.
Series lbm_series(const std::string& mode, double bytes, double mlups) {
  Series s;
  s.id = "lbm." + mode;
  s.probe = "lbm";
  for (double edge : {32.0, 128.0, 256.0}) {
    Point p;
    p.x = edge * edge * edge;
    p.y = edge == 256 ? mlups : edge == 128 ? mlups * 0.95 : mlups * 0.5;
    p.samples = {p.y * 0.99, p.y, p.y * 1.01};
    s.points.push_back(p);
  }
  s.meta = {{"bytes_per_cell_update", bytes},
            {"physics", {{"nu_rel_error", 0.002}, {"mass_rel_error", 1e-7}, {"flow", "wave"}}}};
  return s;
}

Finding dram_copy(double gbps) {
  return test::make_finding("memory.dram.copy_gbps", gbps, "", 0.9, {}, {}, {"bandwidth.copy"}, "", "");
}

const Finding& get(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return f;
  throw std::runtime_error("no finding " + id);
}

TEST(LbmAnalysis, VerdictAgainstTheMeasuredDram) {
  Results r;
  // 3000 GB/s of DRAM; FP32 at 15000 MLUP/s moves 2295 GB/s (77%), FP16S at
  // 28000 moves 2156 (72%), FP16C held back at 12000 moves 924 (31%).
  r.series = {lbm_series("fp32", 153, 15000), lbm_series("fp16s", 77, 28000), lbm_series("fp16c", 77, 12000)};
  const auto fs = analysis::lbm_findings(r, {dram_copy(3000)});
  EXPECT_DOUBLE_EQ(number(get(fs, "app.lbm.fp32.mlups")), 15000);
  EXPECT_NEAR(number(get(fs, "app.lbm.fp32.effective_gbps")), 2295, 1e-9);
  EXPECT_NEAR(number(get(fs, "app.lbm.fp32.fraction_of_dram")), 0.765, 1e-9);
  EXPECT_TRUE(std::get<bool>(get(fs, "app.lbm.fp32.bound").value));
  EXPECT_TRUE(std::get<bool>(get(fs, "app.lbm.fp16s.bound").value));
  EXPECT_FALSE(std::get<bool>(get(fs, "app.lbm.fp16c.bound").value));
  EXPECT_GT(get(fs, "app.lbm.fp16c.bound").confidence, 0.5);
  EXPECT_NEAR(number(get(fs, "app.lbm.fp16c.viscosity_rel_error")), 0.002, 1e-12);
  EXPECT_NE(get(fs, "app.lbm.fp16c.fraction_of_dram").evidence.size(), 1u);  // cites the DRAM series too
}

// A rate still rising with the box, or a single box: the largest box may
// be too small to load the memory, so no verdict is sure (the H100 at
// --budget-scale 0.6 measured FP32 on a 16^3 box alone, at 4% of DRAM).
TEST(LbmAnalysis, RisingOrSingleBoxGivesNoSureVerdict) {
  Results r;
  Series rising = lbm_series("fp32", 153, 15000);
  rising.points.erase(rising.points.begin() + 1);  // 32^3 at half, then 256^3: 2x
  Series single = lbm_series("fp16c", 77, 1000);
  single.points.resize(1);
  r.series = {rising, single};
  const auto fs = analysis::lbm_findings(r, {dram_copy(3000)});
  EXPECT_LE(get(fs, "app.lbm.fp32.bound").confidence, 0.3);
  EXPECT_NE(get(fs, "app.lbm.fp32.bound").note.find("still rising"), std::string::npos);
  EXPECT_LE(get(fs, "app.lbm.fp16c.bound").confidence, 0.3);
  EXPECT_NE(get(fs, "app.lbm.fp16c.bound").note.find("Only the 32^3 box"), std::string::npos);
}

TEST(LbmAnalysis, WithoutDramTheModesAreComparedAndTheVerdictIsAGuess) {
  Results r;
  r.series = {lbm_series("fp32", 153, 15000), lbm_series("fp16c", 77, 12000)};
  const auto fs = analysis::lbm_findings(r, {});
  EXPECT_THROW(get(fs, "app.lbm.fp32.fraction_of_dram"), std::runtime_error);
  EXPECT_TRUE(std::get<bool>(get(fs, "app.lbm.fp32.bound").value));
  EXPECT_FALSE(std::get<bool>(get(fs, "app.lbm.fp16c.bound").value));
  EXPECT_LT(get(fs, "app.lbm.fp32.bound").confidence, 0.5);
}

}  // namespace
}  // namespace gpuscope
