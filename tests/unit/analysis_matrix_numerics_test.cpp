// The matrix numerics inference (analysis/matrix_numerics.hpp) on results
// made by the host models themselves: each described arithmetic of a set,
// run over the plan's patterns, is read back property by property, exactly;
// a unit that matches no model is reported so, with nothing adopted.
#include "analysis/matrix_numerics.hpp"
#include "analysis/unfound.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>

using namespace gpuscope;
using namespace gpuscope::analysis;

namespace {

const MatrixChainShape kF16F32{
    MatrixType::f16, MatrixType::f16, MatrixType::f32, MatrixType::f32, 16, 16, 16};
const MatrixChainShape kF16F16{MatrixType::f16, MatrixType::f16, MatrixType::f16, MatrixType::f16, 16, 16, 8};
const MatrixChainShape kFp8F32{
    MatrixType::f8e4m3, MatrixType::f8e4m3, MatrixType::f32, MatrixType::f32, 16, 16, 32};
const MatrixChainShape kI8I32{MatrixType::i8, MatrixType::i8, MatrixType::i32, MatrixType::i32, 16, 16, 32};

std::vector<uint64_t> run_model(const NumericsPlan& plan, const MatrixArithmetic& a) {
  std::vector<uint64_t> out;
  for (const auto& p : plan.patterns)
    out.push_back(matrix_value_bits(plan.shape.result, matrix_dot(a, plan.shape, p.a, p.b, p.c)));
  return out;
}

const NumericsPlan& plan_for(const MatrixChainShape& s) {
  static std::map<std::string, NumericsPlan> plans;
  const std::string tag = matrix_shape_tag(s);
  if (!plans.count(tag)) {
    const auto t0 = std::chrono::steady_clock::now();
    plans[tag] = numerics_plan(s);
    std::printf("%s: %zu candidates, %zu patterns, %zu classes unresolved, %.2f s\n", tag.c_str(),
                plans[tag].candidates, plans[tag].patterns.size(), plans[tag].unresolved,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return plans[tag];
}

// The value each property should read back: the canonical arithmetic's.
// A property absent from the findings must have been left unfound because
// it cannot act (canonical form) or no input of the types reaches it.
// `unresolved_ok`: a property may also be left unfound because the drawn
// patterns could not separate its values (never read wrong).
void expect_recovered(const MatrixChainShape& s, const MatrixArithmetic& truth, bool unresolved_ok = false) {
  const NumericsPlan& plan = plan_for(s);
  const auto observed = run_model(plan, truth);
  UnfoundCollector unfound;
  const auto fs = numerics_findings(plan, observed, "matrix.x.numerics");
  const auto missing = unfound.take(fs);
  const MatrixArithmetic c = matrix_arithmetic_canonical(truth, s);
  const std::string base = "compute.matrix." + matrix_shape_tag(s) + ".numerics.";
  const std::string what = matrix_arithmetic_text(c, s);
  const Finding* m = find_finding(fs, base + "matches_model");
  ASSERT_TRUE(m) << what;
  ASSERT_EQ(std::get<bool>(m->value), true) << what << ": " << m->note;
  const auto expect_value = [&](const char* id, const FindingValue& want) {
    const Finding* f = find_finding(fs, base + id);
    if (!f) {
      std::string why;
      for (const auto& u : missing)
        if (u.id == base + id) why = u.reason;
      EXPECT_TRUE(why.find("every value gives the same") != std::string::npos ||
                  why.find("no input of these types reaches") != std::string::npos ||
                  (unresolved_ok && why.find("the patterns left") != std::string::npos))
          << what << ": " << id << " unfound: " << why;
      return;
    }
    EXPECT_EQ(f->value, want) << what << ": " << id << " " << f->note;
    EXPECT_GE(f->confidence, 0.5) << id;
  };
  if (!matrix_type_format(s.result).is_float) {
    expect_value("integer_overflow", std::string(matrix_integer_overflow_name(c.integer_overflow)));
    return;
  }
  expect_value("products", std::string(matrix_products_name(c.products)));
  expect_value("sum_bits",
               c.sum_bits == 0 ? FindingValue(std::string("exact")) : FindingValue(double(c.sum_bits)));
  expect_value("sum_rounding", std::string(matrix_rounding_name(c.sum_rounding)));
  expect_value("alignment", std::string(matrix_alignment_name(c.alignment)));
  expect_value("block", double(c.block == 0 ? s.k : c.block));
  expect_value("order", std::string(matrix_order_name(c.order)));
  expect_value("result_rounding", std::string(matrix_rounding_name(c.result_rounding)));
  expect_value("subnormal_inputs", c.subnormal_inputs);
  expect_value("subnormal_outputs", c.subnormal_outputs);
  expect_value("overflow", std::string(matrix_overflow_name(c.overflow)));
}

MatrixArithmetic adder(MatrixProducts products, int bits, MatrixRounding sr, MatrixAlignment al,
                       uint32_t block, MatrixOrder order, MatrixRounding rr) {
  MatrixArithmetic a;
  a.products = products;
  a.sum_bits = bits;
  a.sum_rounding = sr;
  a.alignment = al;
  a.block = block;
  a.order = order;
  a.result_rounding = rr;
  return a;
}

constexpr auto RN = MatrixRounding::nearest_even;
constexpr auto RZ = MatrixRounding::toward_zero;

}  // namespace

// The arithmetics the literature reports, and their neighbours.
TEST(MatrixNumerics, RecoversDescribedArithmetics) {
  const std::vector<MatrixArithmetic> set = {
      MatrixArithmetic{},  // exact, rounded once
      // Fasi et al.'s V100: blocks of 4 (+ c), aligned and truncated to 24 bits, truncating.
      adder(MatrixProducts::exact, 24, RZ, MatrixAlignment::truncate, 4, MatrixOrder::fused, RZ),
      // A100 (fp16): blocks of 8.
      adder(MatrixProducts::exact, 24, RZ, MatrixAlignment::truncate, 8, MatrixOrder::fused, RZ),
      // An f32 FMA chain: one product at a time, rounded to nearest.
      adder(MatrixProducts::exact, 24, RN, MatrixAlignment::exact, 1, MatrixOrder::fused, RN),
      adder(MatrixProducts::input, 24, RN, MatrixAlignment::exact, 2, MatrixOrder::pairwise, RN),
      adder(MatrixProducts::exact, 26, RN, MatrixAlignment::truncate, 16, MatrixOrder::pairwise, RZ),
      adder(MatrixProducts::exact, 13, RN, MatrixAlignment::exact, 4, MatrixOrder::pairwise, RN),
  };
  for (const auto& a : set) expect_recovered(kF16F32, a);
  MatrixArithmetic flushing = set[1];
  flushing.subnormal_inputs = false;
  expect_recovered(kF16F32, flushing);
}

// An f16 result hides the internal sum's low bits: only a double rounding
// at a tie of the result shows them, and the drawn patterns leave some
// candidates together (numerics_plan's unresolved classes). What they
// cannot tell apart is left unfound, never read wrong.
TEST(MatrixNumerics, RecoversHalfAccumulators) {
  MatrixArithmetic exact;
  exact.subnormal_outputs = false;
  exact.overflow = MatrixOverflow::saturate;
  expect_recovered(kF16F16, exact);
  expect_recovered(kF16F16,
                   adder(MatrixProducts::input, 11, RN, MatrixAlignment::exact, 1, MatrixOrder::fused, RN));
  MatrixArithmetic v100 =
      adder(MatrixProducts::exact, 24, RZ, MatrixAlignment::truncate, 4, MatrixOrder::fused, RN);
  v100.subnormal_inputs = false;
  expect_recovered(kF16F16, v100, true);
}

// DeepSeek-V3's Hopper fp8: about 14 bits kept.
TEST(MatrixNumerics, RecoversFp8WithFewBits) {
  expect_recovered(
      kFp8F32, adder(MatrixProducts::exact, 14, RZ, MatrixAlignment::truncate, 0, MatrixOrder::fused, RZ));
  expect_recovered(
      kFp8F32, adder(MatrixProducts::exact, 13, RZ, MatrixAlignment::truncate, 16, MatrixOrder::fused, RZ));
}

TEST(MatrixNumerics, RecoversIntegerOverflow) {
  MatrixArithmetic a;
  expect_recovered(kI8I32, a);
  a.integer_overflow = MatrixIntegerOverflow::saturate;
  expect_recovered(kI8I32, a);
}

// A result no model gives (one bit changed) makes the unit match none: the
// finding says so with what was seen, and no property is adopted.
TEST(MatrixNumerics, MatchingNoModelIsReportedAsSuch) {
  const NumericsPlan& plan = plan_for(kF16F32);
  auto observed = run_model(plan, MatrixArithmetic{});
  observed[0] ^= 1;
  UnfoundCollector unfound;
  const auto fs = numerics_findings(plan, observed, "matrix.x.numerics");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(std::get<bool>(fs[0].value), false);
  EXPECT_NE(fs[0].note.find("behaves like none of the"), std::string::npos) << fs[0].note;
  EXPECT_NE(fs[0].note.find("pattern 0"), std::string::npos) << fs[0].note;
  const auto missing = unfound.take(fs);
  EXPECT_EQ(missing.size(), 10u);
}

// The plan's patterns: inputs exact in their types, and the launch packing
// puts each on D's diagonal, read back by numerics_observed.
TEST(MatrixNumerics, PlanPacksIntoLaunches) {
  const NumericsPlan& plan = plan_for(kF16F32);
  // Every candidate apart but at the widest sum (28 bits), where only a
  // double rounding at a tie of the result could show the difference.
  EXPECT_LE(plan.unresolved, 2u);
  const NumericsInputs in = numerics_inputs(plan);
  EXPECT_EQ(in.subgroups, (plan.patterns.size() + 15) / 16);
  // D as the model computes it from the packed A, B and C.
  std::vector<std::byte> out(in.out_bytes);
  const auto& s = plan.shape;
  for (uint64_t g = 0; g < in.subgroups; ++g)
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 16; ++j) {
        std::vector<double> a(16), b(16);
        for (uint32_t k = 0; k < 16; ++k) {
          a[k] = matrix_decode(s.a, in.a_bytes.data() + ((g * 256) + i * 16 + k) * 2);
          b[k] = matrix_decode(s.b, in.b_bytes.data() + ((g * 256) + k * 16 + j) * 2);
        }
        const double c = matrix_decode(s.c, in.c_bytes.data() + ((g * 256) + i * 16 + j) * 4);
        matrix_encode_value(s.result, matrix_dot({}, s, a, b, c), out.data() + ((g * 256) + i * 16 + j) * 4);
      }
  EXPECT_EQ(numerics_observed(plan, out), run_model(plan, MatrixArithmetic{}));
  const Series series = numerics_series(plan, run_model(plan, MatrixArithmetic{}));
  EXPECT_EQ(series.id, "matrix.f16xf16->f32.16x16x16.numerics");
  Results r;
  r.series.push_back(series);
  const auto fs = matrix_numerics_findings(r);
  const Finding* m = find_finding(fs, "compute.matrix.f16xf16->f32.16x16x16.numerics.matches_model");
  ASSERT_TRUE(m);
  EXPECT_EQ(std::get<bool>(m->value), true);
}

// A device whose backend has no numerics kernel: the throughput series says
// why, and the analysis passes the reason on as the part's unfound finding.
TEST(MatrixNumerics, SkippedPartGivesItsReason) {
  Results r;
  Series tp;
  tp.id = "matrix.f16xf16->f32.16x16x16.throughput";
  tp.probe = "matrix";
  tp.meta["numerics_not_run"] = "no numerics kernel through Vulkan 1.3.280 yet";
  r.series.push_back(tp);
  UnfoundCollector unfound;
  const auto fs = matrix_numerics_findings(r);
  EXPECT_TRUE(fs.empty());
  const auto missing = unfound.take(fs);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].id, "compute.matrix.f16xf16->f32.16x16x16.numerics.matches_model");
  EXPECT_EQ(missing[0].reason, "no numerics kernel through Vulkan 1.3.280 yet");
}
