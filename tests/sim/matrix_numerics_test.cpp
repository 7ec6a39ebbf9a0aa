// The matrix probe's numerics part on the sim: drawn GPUs whose matrix
// shapes carry drawn arithmetics (docs/sim.md, matrix.shapes[].arithmetic)
// run the probe, and the analysis must give back every property of every
// arithmetic exactly: each finding equal to the description's canonical
// value, none confidently wrong, and a property left unfound only where it
// cannot act or no input of the types reaches it.
#include "analysis/matrix_numerics.hpp"
#include "analysis/unfound.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/probe.hpp"

#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <cstdio>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

// The description's fields of an arithmetic.
nlohmann::json arithmetic_json(const MatrixArithmetic& a) {
  return {{"products", matrix_products_name(a.products)},
          {"sum_bits", a.sum_bits},
          {"sum_rounding", matrix_rounding_name(a.sum_rounding)},
          {"alignment", matrix_alignment_name(a.alignment)},
          {"block", a.block},
          {"order", matrix_order_name(a.order)},
          {"result_rounding", matrix_rounding_name(a.result_rounding)},
          {"subnormal_inputs", a.subnormal_inputs},
          {"subnormal_outputs", a.subnormal_outputs},
          {"overflow", matrix_overflow_name(a.overflow)},
          {"integer_overflow", matrix_integer_overflow_name(a.integer_overflow)}};
}

// One of the candidates the analysis knows, with drawn subnormal and
// overflow behaviour: the recovery asked of it is exact.
MatrixArithmetic draw_arithmetic(SplitMix64& rng, const MatrixChainShape& s) {
  const auto core = analysis::numerics_core_candidates(s);
  MatrixArithmetic a = core[rng.below(static_cast<uint32_t>(core.size()))];
  a.subnormal_inputs = rng.below(2) == 0;
  a.subnormal_outputs = rng.below(2) == 0;
  a.overflow = rng.below(2) ? MatrixOverflow::saturate : MatrixOverflow::infinity;
  a.integer_overflow = rng.below(2) ? MatrixIntegerOverflow::saturate : MatrixIntegerOverflow::wrap;
  return a;
}

MatrixChainShape shape_of(const nlohmann::json& u) {
  const auto t = [&](const char* key) { return *matrix_type_from_tag(u.at(key).get<std::string>()); };
  return {t("a"),
          t("b"),
          t("c"),
          u.contains("result") ? t("result") : t("c"),
          u.at("m").get<uint32_t>(),
          u.at("n").get<uint32_t>(),
          u.at("k").get<uint32_t>()};
}

// Each property the analysis reads, as the description's value gives it.
std::vector<std::pair<std::string, FindingValue>> expected(const MatrixArithmetic& truth,
                                                           const MatrixChainShape& s) {
  const MatrixArithmetic c = matrix_arithmetic_canonical(truth, s);
  if (!matrix_type_format(s.result).is_float)
    return {{"integer_overflow", std::string(matrix_integer_overflow_name(c.integer_overflow))}};
  return {
      {"products", std::string(matrix_products_name(c.products))},
      {"sum_bits", c.sum_bits == 0 ? FindingValue(std::string("exact")) : FindingValue(double(c.sum_bits))},
      {"sum_rounding", std::string(matrix_rounding_name(c.sum_rounding))},
      {"alignment", std::string(matrix_alignment_name(c.alignment))},
      {"block", double(c.block == 0 ? s.k : c.block)},
      {"order", std::string(matrix_order_name(c.order))},
      {"result_rounding", std::string(matrix_rounding_name(c.result_rounding))},
      {"subnormal_inputs", c.subnormal_inputs},
      {"subnormal_outputs", c.subnormal_outputs},
      {"overflow", std::string(matrix_overflow_name(c.overflow))}};
}

}  // namespace

TEST(SimMatrixNumerics, RecoversEveryDrawnArithmetic) {
  constexpr int kDraws = 8;
  int found = 0, unfound_allowed = 0, wrong = 0;
  for (int draw = 0; draw < kDraws; ++draw) {
    SplitMix64 rng(0x5eed0000 + static_cast<uint64_t>(draw));
    nlohmann::json j = test::drawn_description(1 + static_cast<uint64_t>(draw % 3));
    std::vector<std::pair<MatrixChainShape, MatrixArithmetic>> truths;
    for (auto& u : j["matrix"]["shapes"]) {
      const MatrixChainShape s = shape_of(u);
      const MatrixArithmetic a = draw_arithmetic(rng, s);
      u["arithmetic"] = arithmetic_json(a);
      truths.emplace_back(s, a);
    }
    SimDevice dev(parse_sim_config(j, "numerics"), "sim:numerics");
    const Results r = test::run_sim_probe(dev, run_matrix_probe, true);
    analysis::UnfoundCollector collector;
    const auto fs = analysis::matrix_numerics_findings(r);
    const auto missing = collector.take(fs);
    for (const auto& [s, truth] : truths) {
      const std::string base = "compute.matrix." + matrix_shape_tag(s) + ".numerics.";
      const std::string what = matrix_arithmetic_text(matrix_arithmetic_canonical(truth, s), s);
      std::printf("draw %d %s: %s\n", draw, matrix_shape_tag(s).c_str(), what.c_str());
      const Finding* m = find_finding(fs, base + "matches_model");
      ASSERT_TRUE(m) << what;
      EXPECT_EQ(m->value, FindingValue(true)) << what << ": " << m->note;
      for (const auto& [prop, want] : expected(truth, s)) {
        const Finding* f = find_finding(fs, base + prop);
        if (f) {
          ++found;
          if (f->value != want) {
            ++wrong;
            ADD_FAILURE() << what << ": " << prop << " read as " << f->note;
          }
          continue;
        }
        std::string why;
        for (const auto& u : missing)
          if (u.id == base + prop) why = u.reason;
        const bool allowed = why.find("every value gives the same") != std::string::npos ||
                             why.find("no input of these types reaches") != std::string::npos;
        EXPECT_TRUE(allowed) << what << ": " << prop << " unfound: " << why;
        unfound_allowed += allowed;
      }
    }
  }
  std::printf("%d properties recovered, %d that cannot act or be reached, %d wrong\n", found, unfound_allowed,
              wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(found, kDraws * 6);
}

// Absent: the exact default. Present: read strictly, like every field.
TEST(SimMatrixNumerics, ArithmeticIsReadStrictly) {
  nlohmann::json j = test::drawn_description(1);
  EXPECT_EQ(parse_sim_config(j, "plain").matrix.shapes[0].arithmetic, MatrixArithmetic{});
  j["matrix"]["shapes"][0]["arithmetic"] = {{"sum_bits", 14}, {"sum_rounding", "toward-zero"}, {"block", 4}};
  const MatrixArithmetic a = parse_sim_config(j, "fp8").matrix.shapes[0].arithmetic;
  EXPECT_EQ(a.sum_bits, 14);
  EXPECT_EQ(a.sum_rounding, MatrixRounding::toward_zero);
  EXPECT_EQ(a.block, 4u);
  j["matrix"]["shapes"][0]["arithmetic"] = {{"sum_bit", 14}};
  try {
    parse_sim_config(j, "misspelt");
    FAIL() << "read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("matrix.shapes[0].arithmetic.sum_bit"), std::string::npos)
        << e.what();
  }
  j["matrix"]["shapes"][0]["arithmetic"] = {{"sum_rounding", "up"}};
  EXPECT_THROW(parse_sim_config(j, "bad"), UsageError);
  j["matrix"]["shapes"][0]["arithmetic"] = {{"sum_bits", 65}};
  EXPECT_THROW(parse_sim_config(j, "wide"), UsageError);
}
