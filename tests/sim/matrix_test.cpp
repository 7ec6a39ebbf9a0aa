// The matrix family: its host twin (core/matrix_chain.hpp: element
// encodings, values, the reference result and the check), the sim's matrix
// engine recovered through the matrix probe and its analysis on drawn GPUs
// (expected values read from the description by its meaning), the skip
// where a device lists no shapes, and the analysis on made-up series.
#include "analysis/matrix.hpp"
#include "analysis/unfound.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/matrix_chain.hpp"
#include "probes/probe.hpp"

#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

uint64_t bits_of(MatrixType t, double v) {
  std::byte b[8] = {};
  matrix_encode(t, v, b);
  uint64_t out = 0;
  std::memcpy(&out, b, matrix_type_bytes(t));
  return out;
}

MatrixChainShape shape_of(const char* a, const char* b, const char* c, uint32_t m, uint32_t n, uint32_t k) {
  std::string why;
  const auto s = matrix_chain_shape(a, b, c, c, m, n, k, &why);
  EXPECT_TRUE(s) << why;
  return s.value_or(MatrixChainShape{});
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

// Bit patterns from the formats' definitions (IEEE 754 binary16, bfloat16,
// OCP FP8 E4M3 and E5M2).
TEST(MatrixChain, EncodesEachTypesBits) {
  EXPECT_EQ(bits_of(MatrixType::f16, 1), 0x3C00u);
  EXPECT_EQ(bits_of(MatrixType::f16, -2), 0xC000u);
  EXPECT_EQ(bits_of(MatrixType::f16, 2048), 0x6800u);
  EXPECT_EQ(bits_of(MatrixType::bf16, 1), 0x3F80u);
  EXPECT_EQ(bits_of(MatrixType::bf16, -3), 0xC040u);
  EXPECT_EQ(bits_of(MatrixType::f8e4m3, 1), 0x38u);
  EXPECT_EQ(bits_of(MatrixType::f8e4m3, -2), 0xC0u);
  EXPECT_EQ(bits_of(MatrixType::f8e5m2, 1), 0x3Cu);
  EXPECT_EQ(bits_of(MatrixType::f32, 1), 0x3F800000u);
  EXPECT_EQ(bits_of(MatrixType::i8, -1), 0xFFu);
  EXPECT_EQ(bits_of(MatrixType::i32, -5), 0xFFFFFFFBu);
  for (const auto t : {MatrixType::f16, MatrixType::bf16, MatrixType::f32, MatrixType::f64, MatrixType::i8,
                       MatrixType::i32, MatrixType::f8e4m3, MatrixType::f8e5m2})
    for (double v : {0.0, 1.0, -1.0, 2.0, -2.0, 7.0, -12.0}) {
      std::byte b[8] = {};
      matrix_encode(t, v, b);
      EXPECT_EQ(matrix_decode(t, b), v) << matrix_type_tag(t) << " " << v;
    }
  std::byte b[8] = {};
  EXPECT_THROW(matrix_encode(MatrixType::f16, 2049, b), DeviceError);  // not exact in 11 bits
  EXPECT_THROW(matrix_encode(MatrixType::u8, -1, b), DeviceError);
  EXPECT_THROW(matrix_encode(MatrixType::i8, 128, b), DeviceError);
  EXPECT_EQ(bits_of(MatrixType::i8, -128), 0x80u);
  EXPECT_THROW(matrix_encode(MatrixType::f8e5m2, 9, b), DeviceError);  // 1.001b x 2^3: 3 fraction bits
  EXPECT_EQ(bits_of(MatrixType::f8e5m2, 12), 0x4Au);                  // 1.10b x 2^3: exponent 18, fraction 10b
}

// A wide accumulator grows by G every pair (so the stored result depends
// on the pairs run), a narrow one returns to C; the check passes the
// reference and names the first wrong element.
TEST(MatrixChain, ReferenceAndCheck) {
  const auto wide = matrix_chain_inputs(shape_of("f16", "f16", "f32", 16, 16, 16), 2);
  bool grows = false;
  for (double g : wide.growth) grows = grows || g != 0;
  EXPECT_TRUE(grows);
  EXPECT_GE(wide.max_pairs, uint64_t{1} << 22);
  const auto narrow = matrix_chain_inputs(shape_of("f16", "f16", "f16", 16, 16, 16), 1);
  for (double g : narrow.growth) EXPECT_EQ(g, 0);
  const auto unsigned_in = matrix_chain_inputs(shape_of("u8", "u8", "u32", 16, 16, 32), 1);
  for (double v : unsigned_in.b2) EXPECT_GE(v, 0);

  // D for 3 subgroups after 5 pairs, written as a device would.
  const uint64_t pairs = 5, subgroups = 3;
  const size_t mn = 256;
  std::vector<std::byte> out(subgroups * 2 * mn * 4);
  for (uint64_t g = 0; g < subgroups; ++g)
    for (uint32_t j = 0; j < 2; ++j) {
      const auto d = matrix_chain_expected(wide, j, pairs);
      for (size_t i = 0; i < mn; ++i) matrix_encode(MatrixType::f32, d[i], out.data() + ((g * 2 + j) * mn + i) * 4);
    }
  EXPECT_EQ(matrix_chain_check(wide, pairs, subgroups, out), "");
  EXPECT_NE(matrix_chain_check(wide, pairs + 1, subgroups, out), "");
  matrix_encode(MatrixType::f32, 12345, out.data() + ((2 * 2 + 1) * mn + 17) * 4);
  const std::string bad = matrix_chain_check(wide, pairs, subgroups, out);
  EXPECT_NE(bad.find("subgroup 2 accumulator 1 element (1, 1)"), std::string::npos) << bad;

  // The growth is A x (B + B2), by a product written out here.
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t j = 0; j < 16; ++j) {
      double g = 0;
      for (uint32_t k = 0; k < 16; ++k) g += wide.a[i * 16 + k] * (wide.b[k * 16 + j] + wide.b2[k * 16 + j]);
      EXPECT_EQ(wide.growth[i * 16 + j], g);
    }
}

TEST(MatrixChain, RejectsWhatItHasNoValuesFor) {
  std::string why;
  EXPECT_FALSE(matrix_chain_shape("f16", "f16", "f4", "f4", 16, 16, 16, &why));
  EXPECT_NE(why.find("f4"), std::string::npos);
  EXPECT_FALSE(matrix_chain_shape("f16", "f16", "f16", "f16", 16, 16, 1024, &why));
}

class SimMatrixRecovery : public testing::TestWithParam<std::string> {};

// Throughput within 3% of the engine's rate x shader cores x clock, and the
// dependent chain's time per multiply-accumulate within 3% of the described
// cycles (or of the engine's time for one, where longer), for every shape
// the description lists.
TEST_P(SimMatrixRecovery, RatesAndLatencies) {
  const SimConfig c = test::sim_config_named(GetParam());
  ASSERT_FALSE(c.matrix.shapes.empty());
  SimDevice dev(c, "sim:" + c.id_name);
  EXPECT_EQ(dev.info().features.matrix_shapes.size(), c.matrix.shapes.size());
  const Results r = test::run_sim_probe(dev, run_matrix_probe, false);
  const auto fs = analysis::matrix_findings(r, {});
  for (const auto& u : c.matrix.shapes) {
    const std::string base = fmt::format("compute.matrix.{}x{}->{}.{}x{}x{}", u.a, u.b, u.result, u.m, u.n, u.k);
    const Finding* tp = find(fs, base + ".throughput_gops");
    const Finding* lat = find(fs, base + ".latency_cycles");
    ASSERT_TRUE(tp && lat) << base;
    const double want_gops = u.macs_per_clock_per_core * c.core.shader_cores * c.core.clock_mhz / 1000;
    // One multiply-accumulate alone takes its latency, or the engine's time
    // for its m x n x k multiply-adds where that is longer.
    const double want_cycles = std::max(u.latency_cycles, double(u.m) * u.n * u.k / u.macs_per_clock_per_core);
    std::printf("matrix %s %s: configured %.1f Gop/s and %.1f cycles, recovered %.1f and %.1f\n",
                c.id_name.c_str(), base.c_str(), want_gops, want_cycles, number(*tp), number(*lat));
    EXPECT_NEAR(number(*tp) / want_gops, 1, 0.03) << base;
    EXPECT_NEAR(number(*lat) / want_cycles, 1, 0.03) << base;
    EXPECT_GE(tp->confidence, 0.8);
  }
  // No compute series in these results: the comparison says why it is absent.
  EXPECT_EQ(find(fs, "compute.matrix.peak_vs_fp32_fma"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Drawn, SimMatrixRecovery, testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);

// A preset without a matrix engine lists no shapes, and the probe skips with
// the reason.
TEST(SimMatrix, SkippedWithoutAnEngine) {
  SimDevice dev(load_sim_preset("mali-g52"), "sim:mali-g52");
  EXPECT_TRUE(dev.info().features.matrix_shapes.empty());
  try {
    test::run_sim_probe(dev, run_matrix_probe, true);
    FAIL() << "the probe ran";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("no matrix multiply-accumulate shapes"), std::string::npos) << e.what();
  }
}

// A sim whose listed shape has types the family has no values for runs the
// others and says which it left out, and why.
TEST(SimMatrix, LeavesOutShapesWithoutValues) {
  nlohmann::json j = test::drawn_description(1);
  // A bf16 accumulator holds integers exactly up to 256 only: no room for
  // partial sums of 128 products.
  j["matrix"]["shapes"].push_back({{"a", "bf16"},
                                   {"b", "bf16"},
                                   {"c", "bf16"},
                                   {"m", 16},
                                   {"n", 16},
                                   {"k", 128},
                                   {"macs_per_clock_per_core", 64},
                                   {"latency_cycles", 20}});
  j["matrix"]["shapes"][1] = j["matrix"]["shapes"][2];  // only f16->f32 and the odd one
  j["matrix"]["shapes"].erase(2);
  SimDevice dev(parse_sim_config(j, "odd"), "sim:odd");
  ProbeOptions opts;
  opts.quick = true;
  ProbeContext ctx{dev, opts, 5.0};
  const auto series = run_matrix_probe(ctx);
  ASSERT_EQ(series.size(), 3u);  // f16 -> f32's latency, throughput and numerics
  EXPECT_EQ(series.back().id, "matrix.f16xf16->f32.16x16x16.numerics");
  ASSERT_EQ(series.front().meta["not_run"].size(), 1u);
  EXPECT_NE(series.front().meta["not_run"][0]["reason"].get<std::string>().find("no exact range"), std::string::npos);
}

TEST(SimMatrix, DescriptionIsCheckedStrictly) {
  nlohmann::json j = test::drawn_description(2);
  j["matrix"]["shapes"][0]["a"] = "f12";
  EXPECT_THROW(parse_sim_config(j, "bad"), UsageError);
  j = test::drawn_description(2);
  j["matrix"]["shapes"][1] = j["matrix"]["shapes"][0];
  EXPECT_THROW(parse_sim_config(j, "dup"), UsageError);
  j = test::drawn_description(2);
  j["matrix"]["shapes"][0]["rate"] = 3;
  EXPECT_THROW(parse_sim_config(j, "misspelt"), UsageError);
}

namespace {

Series series_of(const std::string& id, const std::string& probe, std::vector<std::pair<double, double>> points) {
  Series s;
  s.id = id;
  s.probe = probe;
  for (auto [x, y] : points) s.points.push_back({x, y, {y * 0.99, y, y * 1.01}});
  return s;
}

}  // namespace

// The best shape against FP32 FMA; latency in cycles at the measured clock
// where there is one, else at the reported clock, else not at all (and why).
TEST(MatrixAnalysis, PeakAgainstFp32AndCycles) {
  Results r;
  r.device.clock_mhz = 2000;
  r.device.compute_units = 10;
  r.series.push_back(series_of("matrix.f16xf16->f32.16x16x16.throughput", "matrix", {{2, 300}, {4, 800}, {8, 1000}}));
  r.series.push_back(series_of("matrix.i8xi8->i32.16x16x32.throughput", "matrix", {{8, 2000}}));
  r.series.push_back(series_of("matrix.f16xf16->f32.16x16x16.latency", "matrix", {{1, 16}}));
  r.series.push_back(series_of("compute.fp32.fma", "compute", {{1, 250}, {4, 125}}));
  {
    const auto fs = analysis::matrix_findings(r, {});
    const Finding* tp = find(fs, "compute.matrix.f16xf16->f32.16x16x16.throughput_gops");
    ASSERT_TRUE(tp);
    EXPECT_EQ(number(*tp), 1000);
    const Finding* peak = find(fs, "compute.matrix.peak_vs_fp32_fma");
    ASSERT_TRUE(peak);
    EXPECT_DOUBLE_EQ(number(*peak), 8.0);  // int8's 2000 over fp32's 250
    EXPECT_EQ(peak->evidence.front(), "matrix.i8xi8->i32.16x16x32.throughput");
    const Finding* cyc = find(fs, "compute.matrix.f16xf16->f32.16x16x16.latency_cycles");
    ASSERT_TRUE(cyc);
    EXPECT_DOUBLE_EQ(number(*cyc), 32);  // 16 ns at the reported 2 GHz
  }
  {
    Finding clock;
    clock.id = "device.measured_clock_mhz";
    clock.value = 1500.0;
    clock.confidence = 0.9;
    const auto fs = analysis::matrix_findings(r, {clock});
    EXPECT_DOUBLE_EQ(number(*find(fs, "compute.matrix.f16xf16->f32.16x16x16.latency_cycles")), 24);
  }
  r.series.pop_back();
  r.device.clock_mhz = 0;
  analysis::UnfoundCollector collector;
  const auto fs = analysis::matrix_findings(r, {});
  EXPECT_EQ(find(fs, "compute.matrix.peak_vs_fp32_fma"), nullptr);
  EXPECT_EQ(find(fs, "compute.matrix.f16xf16->f32.16x16x16.latency_cycles"), nullptr);
  const auto unfound = collector.take(fs);
  ASSERT_EQ(unfound.size(), 2u);
}
