// The host models of a matrix unit's dot product (core/matrix_arithmetic.hpp)
// against cases worked by hand, at least one per hypothesis: each case's
// comment gives the exact sum and what each arithmetic makes of it.
#include "core/error.hpp"
#include "core/matrix_arithmetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace gpuscope;

namespace {

MatrixChainShape shape(MatrixType in, MatrixType acc, uint32_t k) { return {in, in, acc, acc, 1, 1, k}; }

const MatrixChainShape kF16F32 = shape(MatrixType::f16, MatrixType::f32, 4);
const MatrixChainShape kF16F16 = shape(MatrixType::f16, MatrixType::f16, 4);

double p2(int e) { return std::ldexp(1.0, e); }

double dot(const MatrixArithmetic& a, const MatrixChainShape& s, std::vector<double> x, std::vector<double> y,
           double c) {
  return matrix_dot(a, s, x, y, c);
}

MatrixArithmetic adder(int bits, MatrixRounding r, MatrixAlignment al, uint32_t block,
                       MatrixOrder order = MatrixOrder::fused) {
  MatrixArithmetic a;
  a.sum_bits = bits;
  a.sum_rounding = r;
  a.alignment = al;
  a.block = block;
  a.order = order;
  return a;
}

}  // namespace

// 2^24 + 1 + 1 is exact in f32 as 2^24 + 2; a 24-bit sum rounded after
// every product ties 2^24 + 1 back to 2^24 twice.
TEST(MatrixArithmetic, ExactSumAgainstAWidthAfterEveryProduct) {
  const std::vector<double> a = {1, 1, 0, 0}, b = {1, 1, 0, 0};
  EXPECT_EQ(dot({}, kF16F32, a, b, p2(24)), p2(24) + 2);
  EXPECT_EQ(dot(adder(24, MatrixRounding::nearest_even, MatrixAlignment::exact, 1), kF16F32, a, b, p2(24)),
            p2(24));
  // 25 bits hold 2^24 + 1 and 2^24 + 2.
  EXPECT_EQ(dot(adder(25, MatrixRounding::nearest_even, MatrixAlignment::exact, 1), kF16F32, a, b, p2(24)),
            p2(24) + 2);
}

// (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20: f32 holds it, an f16 product keeps
// 1 + 2^-9; an f32 product of two f16 is exact (22 bits).
TEST(MatrixArithmetic, ProductsExactOrRounded) {
  const double x = 1 + p2(-10);
  const std::vector<double> a = {x, 0, 0, 0}, b = {x, 0, 0, 0};
  MatrixArithmetic arith;
  EXPECT_EQ(dot(arith, kF16F32, a, b, 0), 1 + p2(-9) + p2(-20));
  arith.products = MatrixProducts::input;
  EXPECT_EQ(matrix_product_bits(arith, kF16F32), 11);
  EXPECT_EQ(dot(arith, kF16F32, a, b, 0), 1 + p2(-9));
  arith.products = MatrixProducts::accumulator;
  EXPECT_EQ(matrix_product_bits(arith, kF16F32), 0);
  EXPECT_EQ(dot(arith, kF16F32, a, b, 0), 1 + p2(-9) + p2(-20));
  EXPECT_EQ(matrix_product_bits(arith, shape(MatrixType::f32, MatrixType::f32, 4)), 24);
}

// 1 + four products of 2^-24 (2^-12 x 2^-12): exactly 1 + 2^-22, which 24
// bits hold. Aligned to the largest term (1, grid 2^-23) and cut, each
// product is lost: 1, as on Fasi et al.'s V100.
TEST(MatrixArithmetic, AlignmentTruncatesTermsBelowTheLargest) {
  const std::vector<double> a(4, p2(-12)), b(4, p2(-12));
  EXPECT_EQ(dot(adder(24, MatrixRounding::toward_zero, MatrixAlignment::exact, 4), kF16F32, a, b, 1),
            1 + p2(-22));
  EXPECT_EQ(dot(adder(24, MatrixRounding::toward_zero, MatrixAlignment::truncate, 4), kF16F32, a, b, 1), 1.0);
  // 27 bits (grid 2^-26) keep every product.
  EXPECT_EQ(dot(adder(27, MatrixRounding::toward_zero, MatrixAlignment::truncate, 4), kF16F32, a, b, 1),
            1 + p2(-22));
}

// 1 + 3 x 2^-24 = 1 + 1.5 ulp(24 bits): nearest-even gives 1 + 2^-22,
// toward zero 1 + 2^-23.
TEST(MatrixArithmetic, SumRounding) {
  const std::vector<double> a = {p2(-12), p2(-12), p2(-12), 0}, b = a;
  EXPECT_EQ(dot(adder(24, MatrixRounding::nearest_even, MatrixAlignment::exact, 4), kF16F32, a, b, 1),
            1 + p2(-22));
  EXPECT_EQ(dot(adder(24, MatrixRounding::toward_zero, MatrixAlignment::exact, 4), kF16F32, a, b, 1),
            1 + p2(-23));
}

// 1 + 2^-24 ties to 1 at 24 bits: one product at a time loses all four;
// a block of two adds 2^-23 at once, which 24 bits hold.
TEST(MatrixArithmetic, BlockSize) {
  const std::vector<double> a(4, p2(-12)), b(4, p2(-12));
  const auto with_block = [&](uint32_t block) {
    return dot(adder(24, MatrixRounding::nearest_even, MatrixAlignment::exact, block), kF16F32, a, b, 1);
  };
  EXPECT_EQ(with_block(1), 1.0);
  EXPECT_EQ(with_block(2), 1 + p2(-22));
  EXPECT_EQ(with_block(0), 1 + p2(-22));
}

// Products 2^24, 1, -2^24, 1: one fused addition gives 2; a pairwise tree
// rounds 2^24 + 1 to 2^24 and holds -2^24 + 1, giving 1.
TEST(MatrixArithmetic, OrderWithinABlock) {
  const std::vector<double> a = {p2(12), 1, -p2(12), 1}, b = {p2(12), 1, p2(12), 1};
  EXPECT_EQ(dot(adder(24, MatrixRounding::nearest_even, MatrixAlignment::exact, 4), kF16F32, a, b, 0), 2.0);
  EXPECT_EQ(dot(adder(24, MatrixRounding::nearest_even, MatrixAlignment::exact, 4, MatrixOrder::pairwise),
                kF16F32, a, b, 0),
            1.0);
}

// 1 + 1.5 x 2^-24 rounded to f32 (grid 2^-23): up to 1 + 2^-23 at
// nearest-even, 1 toward zero.
TEST(MatrixArithmetic, ResultRounding) {
  const std::vector<double> a = {1.5 * p2(-12), 0, 0, 0}, b = {p2(-12), 0, 0, 0};
  MatrixArithmetic arith;
  EXPECT_EQ(dot(arith, kF16F32, a, b, 1), 1 + p2(-23));
  arith.result_rounding = MatrixRounding::toward_zero;
  EXPECT_EQ(dot(arith, kF16F32, a, b, 1), 1.0);
}

// f16's smallest subnormal 2^-24 as an input; 2^-14 x 2^-1 = 2^-15, a
// subnormal f16 result.
TEST(MatrixArithmetic, Subnormals) {
  MatrixArithmetic arith;
  EXPECT_EQ(dot(arith, kF16F32, {p2(-24), 0, 0, 0}, {1, 0, 0, 0}, 0), p2(-24));
  EXPECT_EQ(dot(arith, kF16F16, {p2(-14), 0, 0, 0}, {0.5, 0, 0, 0}, 0), p2(-15));
  arith.subnormal_inputs = false;
  EXPECT_EQ(dot(arith, kF16F32, {p2(-24), 0, 0, 0}, {1, 0, 0, 0}, 0), 0.0);
  EXPECT_EQ(dot(arith, kF16F16, {p2(-14), 0, 0, 0}, {0.5, 0, 0, 0}, 0), p2(-15));
  arith.subnormal_outputs = false;
  EXPECT_EQ(dot(arith, kF16F16, {p2(-14), 0, 0, 0}, {0.5, 0, 0, 0}, 0), 0.0);
}

// 65504 + 65504 is past f16's largest finite value.
TEST(MatrixArithmetic, Overflow) {
  MatrixArithmetic arith;
  EXPECT_EQ(dot(arith, kF16F16, {65504, 0, 0, 0}, {1, 0, 0, 0}, 65504), INFINITY);
  EXPECT_EQ(dot(arith, kF16F16, {-65504, 0, 0, 0}, {1, 0, 0, 0}, -65504), -INFINITY);
  arith.overflow = MatrixOverflow::saturate;
  EXPECT_EQ(dot(arith, kF16F16, {65504, 0, 0, 0}, {1, 0, 0, 0}, 65504), 65504);
  // f8e4m3 has no infinity: 448 + 448 is NaN, or 448 saturated.
  const auto e4m3 = shape(MatrixType::f8e4m3, MatrixType::f8e4m3, 2);
  EXPECT_EQ(dot(arith, e4m3, {448, 0}, {1, 0}, 448), 448);
  arith.overflow = MatrixOverflow::infinity;
  EXPECT_TRUE(std::isnan(dot(arith, e4m3, {448, 0}, {1, 0}, 448)));
}

TEST(MatrixArithmetic, IntegerWrapOrSaturate) {
  MatrixArithmetic arith;
  const auto i8 = shape(MatrixType::i8, MatrixType::i32, 2);
  const auto u8 = MatrixChainShape{MatrixType::u8, MatrixType::u8, MatrixType::u32, MatrixType::u32, 1, 1, 2};
  EXPECT_EQ(dot(arith, i8, {1, 0}, {1, 0}, 2147483647.0), -2147483648.0);
  EXPECT_EQ(dot(arith, i8, {-128, -128}, {127, 127}, -2147483648.0), 2147451136.0);  // -2^31 - 32512 wraps
  EXPECT_EQ(dot(arith, u8, {255, 1}, {1, 1}, 4294967295.0), 255.0);                  // 2^32 + 255 mod 2^32
  arith.integer_overflow = MatrixIntegerOverflow::saturate;
  EXPECT_EQ(dot(arith, i8, {1, 0}, {1, 0}, 2147483647.0), 2147483647.0);
  EXPECT_EQ(dot(arith, i8, {-128, -128}, {127, 127}, -2147483648.0), -2147483648.0);
  EXPECT_EQ(dot(arith, u8, {255, 1}, {1, 1}, 4294967295.0), 4294967295.0);
  EXPECT_EQ(dot(arith, i8, {-3, 4}, {5, 6}, 10), 19.0);
}

// DeepSeek-V3's reading of Hopper fp8: about 14 bits kept. 16 + 32 products
// of 2^-10 is exactly 16 + 2^-5; 14 bits aligned to 16 (grid 2^-9) cut
// every product.
TEST(MatrixArithmetic, Fp8WithFourteenBits) {
  const auto fp8 = shape(MatrixType::f8e4m3, MatrixType::f32, 32);
  const std::vector<double> a(32, p2(-5)), b(32, p2(-5));
  EXPECT_EQ(dot({}, fp8, a, b, 16), 16 + p2(-5));
  EXPECT_EQ(dot(adder(14, MatrixRounding::toward_zero, MatrixAlignment::truncate, 32), fp8, a, b, 16), 16.0);
  EXPECT_EQ(dot(adder(24, MatrixRounding::toward_zero, MatrixAlignment::truncate, 32), fp8, a, b, 16),
            16 + p2(-5));
}

TEST(MatrixArithmetic, NanAndInfinity) {
  MatrixArithmetic arith;
  EXPECT_TRUE(std::isnan(dot(arith, kF16F32, {NAN, 0, 0, 0}, {1, 0, 0, 0}, 0)));
  EXPECT_TRUE(std::isnan(dot(arith, kF16F32, {INFINITY, 1, 0, 0}, {1, 0, 0, 0}, -INFINITY)));
  EXPECT_TRUE(std::isnan(dot(arith, kF16F32, {INFINITY, 0, 0, 0}, {0, 0, 0, 0}, 0)));
  EXPECT_EQ(dot(arith, kF16F32, {INFINITY, 0, 0, 0}, {2, 0, 0, 0}, 1), INFINITY);
  // -0 + (-0 products) stays -0; +0 among them gives +0.
  EXPECT_TRUE(std::signbit(dot(arith, kF16F32, {-0.0, 0, 0, 0}, {1, 1, 1, 1}, -0.0)) == false);
  EXPECT_TRUE(std::signbit(dot(arith, kF16F32, {-0.0, -0.0, -0.0, -0.0}, {1, 1, 1, 1}, -0.0)));
  EXPECT_THROW(dot(arith, kF16F32, {1, 2}, {1, 2}, 0), UsageError);
}

TEST(MatrixArithmetic, CanonicalFormDropsFieldsThatCannotAct) {
  MatrixArithmetic a =
      adder(0, MatrixRounding::toward_zero, MatrixAlignment::truncate, 2, MatrixOrder::pairwise);
  a.products = MatrixProducts::accumulator;
  EXPECT_EQ(matrix_arithmetic_canonical(a, kF16F32), MatrixArithmetic{});
  MatrixArithmetic b =
      adder(24, MatrixRounding::toward_zero, MatrixAlignment::truncate, 8, MatrixOrder::pairwise);
  const MatrixArithmetic cb = matrix_arithmetic_canonical(b, kF16F32);
  EXPECT_EQ(cb.block, 0u);  // 8 >= k = 4
  EXPECT_EQ(cb.order, MatrixOrder::pairwise);
  EXPECT_EQ(cb.sum_rounding, MatrixRounding::toward_zero);
  b.block = 1;
  EXPECT_EQ(matrix_arithmetic_canonical(b, kF16F32).order, MatrixOrder::fused);
  // One fused block rounded to 24 bits, then to f32: the exact sum rounded
  // once; so is a wider one truncated twice. Not so with a tree or a cut.
  MatrixArithmetic once = adder(24, MatrixRounding::toward_zero, MatrixAlignment::exact, 0);
  MatrixArithmetic exact_rz;
  exact_rz.result_rounding = MatrixRounding::toward_zero;
  EXPECT_EQ(matrix_arithmetic_canonical(once, kF16F32), exact_rz);
  once.sum_bits = 27;
  once.result_rounding = MatrixRounding::toward_zero;
  EXPECT_EQ(matrix_arithmetic_canonical(once, kF16F32), exact_rz);
  once.order = MatrixOrder::pairwise;
  EXPECT_EQ(matrix_arithmetic_canonical(once, kF16F32).sum_bits, 27);
  // f16 products rounded to an f16 accumulator are rounded to the inputs' width.
  MatrixArithmetic acc;
  acc.products = MatrixProducts::accumulator;
  EXPECT_EQ(matrix_arithmetic_canonical(acc, kF16F16).products, MatrixProducts::input);
  MatrixArithmetic i;
  i.integer_overflow = MatrixIntegerOverflow::saturate;
  i.sum_bits = 14;
  EXPECT_EQ(matrix_arithmetic_canonical(i, shape(MatrixType::i8, MatrixType::i32, 16)).sum_bits, 0);
}

// Bit patterns from the formats' definitions.
TEST(MatrixArithmetic, EncodesAnyValueATypeHolds) {
  EXPECT_EQ(matrix_value_bits(MatrixType::f16, p2(-24)), 0x0001u);
  EXPECT_EQ(matrix_value_bits(MatrixType::f16, 65504), 0x7BFFu);
  EXPECT_EQ(matrix_value_bits(MatrixType::f16, -INFINITY), 0xFC00u);
  EXPECT_EQ(matrix_value_bits(MatrixType::f16, 1 + p2(-10)), 0x3C01u);
  EXPECT_EQ(matrix_value_bits(MatrixType::bf16, -0.0), 0x8000u);
  EXPECT_EQ(matrix_value_bits(MatrixType::f8e4m3, 448), 0x7Eu);
  EXPECT_EQ(matrix_value_bits(MatrixType::f8e4m3, NAN), 0x7Fu);
  EXPECT_EQ(matrix_value_bits(MatrixType::f8e4m3, p2(-9)), 0x01u);
  EXPECT_EQ(matrix_value_bits(MatrixType::f8e5m2, 57344), 0x7Bu);
  EXPECT_EQ(matrix_value_bits(MatrixType::f32, p2(-149)), 0x1u);
  EXPECT_EQ(matrix_value_bits(MatrixType::f32, 1.5), 0x3FC00000u);
  EXPECT_THROW(matrix_value_bits(MatrixType::f16, 1 + p2(-11)), DeviceError);
  EXPECT_THROW(matrix_value_bits(MatrixType::f8e4m3, INFINITY), DeviceError);
  EXPECT_THROW(matrix_value_bits(MatrixType::f16, 65536), DeviceError);
  for (double v : {p2(-24), 3 * p2(-24), -1023 * p2(-24), 1.5, -65504.0}) {
    std::byte b[2];
    matrix_encode_value(MatrixType::f16, v, b);
    EXPECT_EQ(matrix_decode(MatrixType::f16, b), v);
  }
  EXPECT_EQ(matrix_round_to_type(MatrixType::f16, 1 + p2(-11)), 1.0);  // a tie, to even
  EXPECT_EQ(matrix_round_to_type(MatrixType::f16, 1 + 3 * p2(-11)), 1 + p2(-9));
}
