// The `matrix` kernel family's meaning, written once: the element types, the
// values the probe puts in A, B, B2 and C, and the result every backend's
// kernel must store. The probe's check, the sim's model and each backend's
// host side use it alike.
//
// The kernel (entry "chain", build parameters a, b, c, result: type tags; m,
// n, k: the shape; chains: accumulators per subgroup) is, per subgroup:
//     D_j = C_j                        for j < chains
//     repeat `pairs` times, for every j:
//         D_j = A x B  + D_j
//         D_j = A x B2 + D_j
//     store D_j at out[(subgroup * chains + j) * m * n], row-major
// with A m x k, B and B2 k x n, C_j m x n, all row-major in their buffers
// (C holds `chains` matrices one after the other) and stored in their
// types' bits. The accumulators are independent of one another; each
// multiply-add depends on the one before it in its chain.
//
// Values are small integers chosen so that every product and every partial
// sum is exact in every type (an integer below the type's exact-integer
// limit), whatever order and internal precision the matrix engine uses: the
// result is then D_j = C_j + pairs x A x (B + B2) exactly, and the check
// compares bits, not tolerances. Where the accumulator is wide enough
// (f32, f64, i32, u32) the chain grows by G = A x (B + B2), a sparse matrix
// of small entries, every pair, so the stored result depends on the number
// of pairs run; where it is narrow (f16, bf16) B2 = -B and the chain returns
// to C_j after every pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope {

enum class MatrixType : uint8_t { f16, bf16, f32, f64, i8, u8, i32, u32, f8e4m3, f8e5m2 };

std::string_view matrix_type_tag(MatrixType t);  // "f16" ...: the names of MatrixShape and finding ids
std::optional<MatrixType> matrix_type_from_tag(std::string_view tag);
size_t matrix_type_bytes(MatrixType t);
bool matrix_type_is_signed(MatrixType t);  // floats and i8/i32
// A type's fields: for floats the exponent and stored fraction bits (bias
// 2^(exp_bits - 1) - 1; `finite_only`: f8e4m3, no infinities, its all-ones
// exponent a normal binade but S.1111.111 NaN); integers have is_float false.
struct MatrixFormat {
  bool is_float = false;
  int exp_bits = 0, man_bits = 0;
  bool finite_only = false;
};
MatrixFormat matrix_type_format(MatrixType t);
// Every integer of magnitude up to this is exact in the type (f16: 2048,
// bf16: 256, f32: 2^24, i32: 2^31 - 1 ...).
double matrix_exact_integer_limit(MatrixType t);

// An integer value in the type's bits (little-endian, as a device buffer
// holds it); throws DeviceError where the type cannot hold it exactly.
void matrix_encode(MatrixType t, double value, std::byte* out);
// The value of the type's bits; NaN for a float NaN, +-inf for infinities.
double matrix_decode(MatrixType t, const std::byte* in);

// One multiply-accumulate as the family runs it, types resolved.
struct MatrixChainShape {
  MatrixType a = MatrixType::f16, b = MatrixType::f16, c = MatrixType::f32, result = MatrixType::f32;
  uint32_t m = 16, n = 16, k = 16;
  uint64_t macs() const { return uint64_t{m} * n * k; }  // multiply-adds of one A x B + C
};

// Resolves a shape's type tags; nullopt (with `why`) for a type this family
// has no values for.
std::optional<MatrixChainShape> matrix_chain_shape(std::string_view a, std::string_view b, std::string_view c,
                                                   std::string_view result, uint32_t m, uint32_t n, uint32_t k,
                                                   std::string* why = nullptr);

// "f16xf16->f32.16x16x16": the shape's part of series and finding ids.
std::string matrix_shape_tag(const MatrixChainShape& s);

// The inputs of one launch, as values and as the buffers' bytes.
struct MatrixChainInputs {
  MatrixChainShape shape;
  uint32_t chains = 1;
  std::vector<double> a, b, b2, c;          // row-major; c holds `chains` matrices
  std::vector<std::byte> a_bytes, b_bytes, b2_bytes, c_bytes;
  std::vector<double> growth;               // G = A x (B + B2), m x n
  // Most pairs one launch may run before a value could leave the exact range.
  uint64_t max_pairs = 0;
};
MatrixChainInputs matrix_chain_inputs(const MatrixChainShape& s, uint32_t chains);

// A x B for row-major A (m x k) and B (k x n), exactly (double sums of small
// integers).
std::vector<double> matrix_product(std::span<const double> a, std::span<const double> b, uint32_t m, uint32_t n,
                                   uint32_t k);

// The accumulator j every subgroup stores after `pairs` pairs, as values.
std::vector<double> matrix_chain_expected(const MatrixChainInputs& in, uint32_t j, uint64_t pairs);

// Checks the stored D of `subgroups` subgroups (out's bytes, result type)
// against matrix_chain_expected; "" when every element matches, else what
// the first mismatch was.
std::string matrix_chain_check(const MatrixChainInputs& in, uint64_t pairs, uint64_t subgroups,
                               std::span<const std::byte> out);

}  // namespace gpuscope
