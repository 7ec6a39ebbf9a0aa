// What one matrix-unit dot product computes: a described arithmetic of
//     d = c + sum_{i < k} a_i * b_i
// (one element of D = A x B + C), and a host model that computes d bit for
// bit under it. Each field is one hypothesis about the hidden arithmetic of
// tensor cores and cooperative matrices; the model follows the
// description of NVIDIA's tensor cores by Fasi, Higham, Mikaitis and
// Pranesh ("Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021):
// products formed exactly, a block of them added together with the running
// sum in one multi-operand adder whose terms are aligned to the largest and
// cut to a fixed width, the block's sum normalised, the next block added to
// it, and the last sum rounded to the result type.
//
// The model, for float types (integers: below):
// 1. Inputs a_i, b_i (types A, B) and c (type C) as decoded values; where
//    `subnormal_inputs` is false a subnormal of its type is taken as zero.
// 2. Products p_i = a_i * b_i, exact; or rounded to nearest-even at the
//    significand width of the input or the accumulator type (`products`),
//    exponent unbounded.
// 3. The running sum s starts at c. The products go in blocks of `block`
//    consecutive ones (the last block shorter), in index order. For each
//    block, by `order`:
//    - fused: s = add(s, p_first, ..., p_last), one multi-operand addition;
//    - pairwise: the block's products summed in a binary tree (neighbours
//      first: ((p0 + p1) + (p2 + p3)) ...), each node one add() of two
//      terms, then s = add(s, tree sum).
//    add(terms): with `sum_bits` 0 the exact sum. Otherwise, where
//    `alignment` is truncate, every term is first cut toward zero to the
//    grid 2^(E - sum_bits + 1), E the exponent of the largest term (bits
//    past the adder's width are lost, as Fasi et al. found on the V100 and
//    A100); the terms are added exactly; the sum is rounded to `sum_bits`
//    significand bits by `sum_rounding`. The internal sum's exponent range
//    is unbounded.
// 4. d = s rounded to the result type by `result_rounding`, at the type's
//    significand width and subnormal grid. A rounded value beyond the
//    type's largest finite one becomes +-infinity (f8e4m3, which has none:
//    NaN) where `overflow` is infinity, +-the largest finite value where it
//    is saturate (whatever the rounding direction: an IEEE toward-zero
//    rounding's overflow reads as saturate). Where `subnormal_outputs` is
//    false a subnormal d is flushed to zero of its sign.
//    A NaN input or an infinite product or c gives the IEEE result of the
//    exact sum (NaN for inf - inf), rounding aside.
// Exactness: sums are held as 128-bit integers on a grid 2^-110 below the
// largest term of each addition; a term smaller than that is cut toward
// zero (far below any width a matrix unit keeps: 110 > 2 x 53).
//
// Integer types: products and the sum are exact; the result wraps
// (two's complement, or modulo 2^bits unsigned) into the result type, or
// saturates the exact sum to its range (`integer_overflow`).
#pragma once

#include "core/matrix_chain.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope {

enum class MatrixRounding : uint8_t { nearest_even, toward_zero };
enum class MatrixProducts : uint8_t { exact, input, accumulator };
enum class MatrixAlignment : uint8_t { exact, truncate };
enum class MatrixOrder : uint8_t { fused, pairwise };
enum class MatrixOverflow : uint8_t { infinity, saturate };
enum class MatrixIntegerOverflow : uint8_t { wrap, saturate };

// The hypotheses, one field each. The defaults are an exact dot product
// rounded once to the result type, IEEE-like: what a description without
// an `arithmetic` says.
struct MatrixArithmetic {
  MatrixProducts products = MatrixProducts::exact;
  int sum_bits = 0;  // significand bits the internal sum keeps, leading bit included; 0: exact
  MatrixRounding sum_rounding = MatrixRounding::nearest_even;
  MatrixAlignment alignment = MatrixAlignment::exact;
  uint32_t block = 0;  // products added together before one rounding; 0: all k
  MatrixOrder order = MatrixOrder::fused;
  MatrixRounding result_rounding = MatrixRounding::nearest_even;
  bool subnormal_inputs = true;   // kept (false: flushed to zero)
  bool subnormal_outputs = true;  // kept (false: flushed to zero)
  MatrixOverflow overflow = MatrixOverflow::infinity;
  MatrixIntegerOverflow integer_overflow = MatrixIntegerOverflow::wrap;

  bool operator==(const MatrixArithmetic&) const = default;
};

// The widest internal sum the model takes (wider is "exact", 0).
constexpr int kMatrixMaxSumBits = 64;

// The names the sim description and the findings use: "nearest-even",
// "toward-zero"; "exact", "input", "accumulator"; "exact", "truncate";
// "fused", "pairwise"; "infinity", "saturate"; "wrap", "saturate".
std::string_view matrix_rounding_name(MatrixRounding r);
std::string_view matrix_products_name(MatrixProducts p);
std::string_view matrix_alignment_name(MatrixAlignment a);
std::string_view matrix_order_name(MatrixOrder o);
std::string_view matrix_overflow_name(MatrixOverflow o);
std::string_view matrix_integer_overflow_name(MatrixIntegerOverflow o);
std::optional<MatrixRounding> matrix_rounding_from(std::string_view name);
std::optional<MatrixProducts> matrix_products_from(std::string_view name);
std::optional<MatrixAlignment> matrix_alignment_from(std::string_view name);
std::optional<MatrixOrder> matrix_order_from(std::string_view name);
std::optional<MatrixOverflow> matrix_overflow_from(std::string_view name);
std::optional<MatrixIntegerOverflow> matrix_integer_overflow_from(std::string_view name);

// One line naming every field: "products exact, sum 24 bits nearest-even
// truncate, block 4 fused, result toward-zero, subnormals in kept out kept,
// overflow infinity" (floats), "integer overflow wrap" (integers).
std::string matrix_arithmetic_text(const MatrixArithmetic& a, const MatrixChainShape& s);

// The significand bits (leading bit included) products keep under `a` for
// shape `s`; 0 where they are exact (rounding to a type at least twice the
// inputs' width is exact too).
int matrix_product_bits(const MatrixArithmetic& a, const MatrixChainShape& s);

// `a` with every field that cannot change a result of shape `s` set to one
// representative, so that two arithmetics give the same results on every
// input whose result is normal or zero exactly when their canonical forms
// are equal (within the model): products rounded to a type wide enough to
// hold them are exact, and rounded to the accumulator's width where that is
// the inputs' are "input"; one fused block added exactly and rounded to the
// result's width, or wider but toward zero twice, is the exact sum rounded
// once; with an exact sum the adder's fields (rounding, alignment, block,
// order) do not act; a block of one product has no order, and one of k or
// more is k; a sum no wider than the result takes the sum's rounding as the
// result's (the result's own acts on subnormal results only); integer types
// have only their overflow, float types all but it.
MatrixArithmetic matrix_arithmetic_canonical(const MatrixArithmetic& a, const MatrixChainShape& s);

// d for one dot product: a and b of k values each (decoded values of types
// s.a and s.b, exactly representable in them), c of type s.c. Returns the
// result's value (exactly representable in s.result; NaN, +-inf where the
// arithmetic gives them). Throws UsageError for a length other than s.k.
double matrix_dot(const MatrixArithmetic& arith, const MatrixChainShape& s, std::span<const double> a,
                  std::span<const double> b, double c);

// Any value a type holds (a float's subnormals, infinities and NaN
// included; an integer in range) as its bits, little-endian; throws
// DeviceError for a value the type cannot hold exactly.
void matrix_encode_value(MatrixType t, double value, std::byte* out);
// The bits matrix_encode_value writes, as an integer (NaN: the type's
// canonical quiet NaN).
uint64_t matrix_value_bits(MatrixType t, double value);

// The value `x` rounded to type t (nearest-even, subnormals and overflow as
// IEEE); for building inputs that the type holds.
double matrix_round_to_type(MatrixType t, double x);

}  // namespace gpuscope
