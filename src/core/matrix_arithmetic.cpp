#include "core/matrix_arithmetic.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace gpuscope {
namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// Bits kept below the largest term of an exact addition (header: Exactness).
constexpr int kWindowBits = 110;
// The longest dot product modelled: matrix shapes' k is at most 256.
constexpr size_t kMaxK = 256;

// m x 2^e, exactly.
struct Exact {
  i128 m = 0;
  int e = 0;
};

u128 magnitude(i128 m) { return m < 0 ? -static_cast<u128>(m) : static_cast<u128>(m); }

int bit_length(u128 v) {
  const auto hi = static_cast<uint64_t>(v >> 64), lo = static_cast<uint64_t>(v);
  if (hi) return 128 - __builtin_clzll(hi);
  return lo ? 64 - __builtin_clzll(lo) : 0;
}

// The exponent of the leading bit; m != 0.
int top(const Exact& v) { return bit_length(magnitude(v.m)) - 1 + v.e; }

Exact from_double(double x) {
  if (x == 0) return {};
  int ex = 0;
  const double f = std::frexp(x, &ex);  // x = f x 2^ex, 0.5 <= |f| < 1
  return {static_cast<i128>(static_cast<int64_t>(std::ldexp(f, 53))), ex - 53};
}

// Exact where the value has at most 53 significant bits and lies in
// double's range, which every caller ensures.
double to_double(const Exact& v) {
  if (v.m == 0) return 0.0;
  const u128 a = magnitude(v.m);
  const int drop = std::max(0, bit_length(a) - 64);
  const double d = std::ldexp(static_cast<double>(static_cast<uint64_t>(a >> drop)), v.e + drop);
  return v.m < 0 ? -d : d;
}

// v rounded to a multiple of 2^q.
Exact round_quantum(const Exact& v, int q, MatrixRounding r) {
  if (v.m == 0 || v.e >= q) return v;
  const int s = q - v.e;
  const u128 a = magnitude(v.m);
  const int len = bit_length(a);
  u128 kept = 0;
  if (s <= len) {
    kept = a >> s;
    const u128 rem = a & ((u128{1} << s) - 1), half = u128{1} << (s - 1);
    if (r == MatrixRounding::nearest_even && (rem > half || (rem == half && (kept & 1)))) ++kept;
  }  // else a < 2^(s-1): below half a quantum, zero either way
  const i128 m = static_cast<i128>(kept);
  return {v.m < 0 ? -m : m, q};
}

Exact round_bits(const Exact& v, int bits, MatrixRounding r) {
  return v.m == 0 ? v : round_quantum(v, top(v) - bits + 1, r);
}

// The terms' sum: exact (bits 0) or as the header's add() states.
Exact add(std::span<const Exact> terms, int bits, MatrixAlignment alignment, MatrixRounding r) {
  int largest = std::numeric_limits<int>::min();
  for (const Exact& t : terms)
    if (t.m != 0) largest = std::max(largest, top(t));
  if (largest == std::numeric_limits<int>::min()) return {};
  const int grid = largest - bits + 1;
  const int anchor = largest - kWindowBits;
  i128 sum = 0;
  for (Exact t : terms) {
    if (t.m == 0) continue;
    if (bits > 0 && alignment == MatrixAlignment::truncate)
      t = round_quantum(t, grid, MatrixRounding::toward_zero);
    if (t.e >= anchor) {
      sum += t.m * (i128{1} << (t.e - anchor));  // at most kWindowBits + 1 bits
    } else if (anchor - t.e < 127) {
      const i128 cut = static_cast<i128>(magnitude(t.m) >> (anchor - t.e));
      sum += t.m < 0 ? -cut : cut;
    }
  }
  const Exact exact{sum, anchor};
  return bits > 0 ? round_bits(exact, bits, r) : exact;
}

struct FloatFormat {
  int man_bits = 0, bias = 0;
  bool finite_only = false;
  int emin() const { return 1 - bias; }
  double max_finite() const {
    return finite_only ? std::ldexp(2 - std::ldexp(1.0, 1 - man_bits), bias + 1)
                       : std::ldexp(2 - std::ldexp(1.0, -man_bits), bias);
  }
};

FloatFormat float_format(MatrixType t) {
  const MatrixFormat f = matrix_type_format(t);
  return {f.man_bits, (1 << (f.exp_bits - 1)) - 1, f.finite_only};
}

bool is_subnormal(MatrixType t, double x) {
  return matrix_type_format(t).is_float && x != 0 && std::isfinite(x) &&
         std::abs(x) < std::ldexp(1.0, float_format(t).emin());
}

// s rounded into type t as step 4 states.
double round_result(MatrixType t, const Exact& s, MatrixRounding r, MatrixOverflow overflow,
                    bool subnormals) {
  if (s.m == 0) return 0.0;
  const FloatFormat f = float_format(t);
  const Exact rounded = round_quantum(s, std::max(top(s), f.emin()) - f.man_bits, r);
  double v = to_double(rounded);
  if (std::abs(v) > f.max_finite()) {
    if (overflow == MatrixOverflow::saturate)
      v = std::copysign(f.max_finite(), v);
    else
      v = f.finite_only ? std::numeric_limits<double>::quiet_NaN() : std::copysign(INFINITY, v);
  }
  if (!subnormals && v != 0 && std::abs(v) < std::ldexp(1.0, f.emin())) v = std::copysign(0.0, v);
  return v;
}

// IEEE's answer where an input is NaN or a term infinite; nullopt where
// every term is finite.
std::optional<double> special_sum(std::span<const double> a, std::span<const double> b, double c) {
  bool nan = std::isnan(c), pos_inf = c == INFINITY, neg_inf = c == -INFINITY;
  for (size_t i = 0; i < a.size(); ++i) {
    const double p = a[i] * b[i];  // inf x 0 is NaN here as in IEEE
    nan = nan || std::isnan(a[i]) || std::isnan(b[i]) || std::isnan(p);
    pos_inf = pos_inf || p == INFINITY;
    neg_inf = neg_inf || p == -INFINITY;
  }
  if (nan || (pos_inf && neg_inf)) return std::numeric_limits<double>::quiet_NaN();
  if (pos_inf) return INFINITY;
  if (neg_inf) return -INFINITY;
  return std::nullopt;
}

double integer_dot(const MatrixArithmetic& arith, const MatrixChainShape& s, std::span<const double> a,
                   std::span<const double> b, double c) {
  i128 sum = static_cast<i128>(static_cast<int64_t>(c));
  for (size_t i = 0; i < a.size(); ++i)
    sum += static_cast<i128>(static_cast<int64_t>(a[i])) * static_cast<int64_t>(b[i]);
  const double hi = matrix_exact_integer_limit(s.result);
  const double lo = matrix_type_is_signed(s.result) ? -hi - 1 : 0;
  if (arith.integer_overflow == MatrixIntegerOverflow::saturate)
    return sum > static_cast<i128>(hi) ? hi : sum < static_cast<i128>(lo) ? lo : static_cast<double>(sum);
  const int width = static_cast<int>(matrix_type_bytes(s.result)) * 8;
  const auto low_bits = static_cast<uint64_t>(static_cast<u128>(sum) & ((u128{1} << width) - 1));
  if (!matrix_type_is_signed(s.result) || low_bits < (uint64_t{1} << (width - 1)))
    return static_cast<double>(low_bits);
  return static_cast<double>(static_cast<int64_t>(low_bits) -
                             static_cast<int64_t>(uint64_t{1} << (width - 1)) -
                             static_cast<int64_t>(uint64_t{1} << (width - 1)));
}

// The sum of products p as a binary tree of two-term adds, the first half's
// sum added to the second's.
Exact pairwise(std::span<const Exact> p, const MatrixArithmetic& arith) {
  if (p.size() == 1) return p[0];
  const size_t half = (p.size() + 1) / 2;
  const Exact pair[2] = {pairwise(p.subspan(0, half), arith), pairwise(p.subspan(half), arith)};
  return add(pair, arith.sum_bits, arith.alignment, arith.sum_rounding);
}

template <typename E, size_t N>
std::optional<E> from_names(std::string_view name, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 2> kRoundings = {"nearest-even", "toward-zero"};
constexpr std::array<std::string_view, 3> kProducts = {"exact", "input", "accumulator"};
constexpr std::array<std::string_view, 2> kAlignments = {"exact", "truncate"};
constexpr std::array<std::string_view, 2> kOrders = {"fused", "pairwise"};
constexpr std::array<std::string_view, 2> kOverflows = {"infinity", "saturate"};
constexpr std::array<std::string_view, 2> kIntegerOverflows = {"wrap", "saturate"};

void store_bits(uint64_t v, size_t bytes, std::byte* out) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string_view matrix_rounding_name(MatrixRounding r) { return kRoundings[static_cast<size_t>(r)]; }
std::string_view matrix_products_name(MatrixProducts p) { return kProducts[static_cast<size_t>(p)]; }
std::string_view matrix_alignment_name(MatrixAlignment a) { return kAlignments[static_cast<size_t>(a)]; }
std::string_view matrix_order_name(MatrixOrder o) { return kOrders[static_cast<size_t>(o)]; }
std::string_view matrix_overflow_name(MatrixOverflow o) { return kOverflows[static_cast<size_t>(o)]; }
std::string_view matrix_integer_overflow_name(MatrixIntegerOverflow o) {
  return kIntegerOverflows[static_cast<size_t>(o)];
}
std::optional<MatrixRounding> matrix_rounding_from(std::string_view n) {
  return from_names<MatrixRounding>(n, kRoundings);
}
std::optional<MatrixProducts> matrix_products_from(std::string_view n) {
  return from_names<MatrixProducts>(n, kProducts);
}
std::optional<MatrixAlignment> matrix_alignment_from(std::string_view n) {
  return from_names<MatrixAlignment>(n, kAlignments);
}
std::optional<MatrixOrder> matrix_order_from(std::string_view n) {
  return from_names<MatrixOrder>(n, kOrders);
}
std::optional<MatrixOverflow> matrix_overflow_from(std::string_view n) {
  return from_names<MatrixOverflow>(n, kOverflows);
}
std::optional<MatrixIntegerOverflow> matrix_integer_overflow_from(std::string_view n) {
  return from_names<MatrixIntegerOverflow>(n, kIntegerOverflows);
}

std::string matrix_arithmetic_text(const MatrixArithmetic& a, const MatrixChainShape& s) {
  if (!matrix_type_format(s.result).is_float)
    return fmt::format("integer overflow {}", matrix_integer_overflow_name(a.integer_overflow));
  const std::string sum = a.sum_bits == 0
                              ? std::string("exact")
                              : fmt::format("{} bits {} {}", a.sum_bits, matrix_rounding_name(a.sum_rounding),
                                            matrix_alignment_name(a.alignment));
  const std::string block = a.block == 0 ? std::string("k") : std::to_string(a.block);
  return fmt::format("products {}, sum {}, block {} {}, result {}, subnormals in {} out {}, overflow {}",
                     matrix_products_name(a.products), sum, block, matrix_order_name(a.order),
                     matrix_rounding_name(a.result_rounding), a.subnormal_inputs ? "kept" : "flushed",
                     a.subnormal_outputs ? "kept" : "flushed", matrix_overflow_name(a.overflow));
}

int matrix_product_bits(const MatrixArithmetic& a, const MatrixChainShape& s) {
  const int pa = matrix_type_format(s.a).man_bits + 1, pb = matrix_type_format(s.b).man_bits + 1;
  int bits = 0;
  if (a.products == MatrixProducts::input) bits = std::max(pa, pb);
  if (a.products == MatrixProducts::accumulator) bits = matrix_type_format(s.c).man_bits + 1;
  return bits >= pa + pb ? 0 : bits;
}

MatrixArithmetic matrix_arithmetic_canonical(const MatrixArithmetic& a, const MatrixChainShape& s) {
  if (!matrix_type_format(s.result).is_float) {
    MatrixArithmetic out;
    out.integer_overflow = a.integer_overflow;
    return out;
  }
  MatrixArithmetic c = a;
  c.integer_overflow = MatrixIntegerOverflow::wrap;
  const int result_bits = matrix_type_format(s.result).man_bits + 1;
  MatrixArithmetic as_input = a;
  as_input.products = MatrixProducts::input;
  if (matrix_product_bits(a, s) == 0)
    c.products = MatrixProducts::exact;
  else if (matrix_product_bits(a, s) == matrix_product_bits(as_input, s))
    c.products = MatrixProducts::input;
  if (c.block >= s.k) c.block = 0;
  // One fused block added exactly, then rounded: at the result's width, or
  // wider and toward zero both times, that is the exact sum rounded once.
  if (c.sum_bits != 0 && c.block == 0 && c.order == MatrixOrder::fused &&
      c.alignment == MatrixAlignment::exact &&
      (c.sum_bits == result_bits ||
       (c.sum_bits > result_bits && c.sum_rounding == MatrixRounding::toward_zero &&
        c.result_rounding == MatrixRounding::toward_zero))) {
    c.result_rounding = c.sum_rounding;
    c.sum_bits = 0;
  }
  if (c.sum_bits == 0) {
    c.sum_rounding = MatrixRounding::nearest_even;
    c.alignment = MatrixAlignment::exact;
    c.block = 0;
  }
  if (c.block == 1 || c.sum_bits == 0) c.order = MatrixOrder::fused;
  // A sum no wider than the result is held by it: its rounding is the sum's.
  if (c.sum_bits != 0 && c.sum_bits <= result_bits) c.result_rounding = c.sum_rounding;
  return c;
}

double matrix_dot(const MatrixArithmetic& arith, const MatrixChainShape& s, std::span<const double> a,
                  std::span<const double> b, double c) {
  if (a.size() != s.k || b.size() != s.k || s.k > kMaxK)
    throw UsageError(fmt::format("matrix dot product of {} and {} values; the shape's k is {} (at most {})",
                                 a.size(), b.size(), s.k, kMaxK));
  if (!matrix_type_format(s.result).is_float) return integer_dot(arith, s, a, b, c);
  const auto flush = [&](MatrixType t, double x) {
    return !arith.subnormal_inputs && is_subnormal(t, x) ? std::copysign(0.0, x) : x;
  };
  // On the stack: the inference runs this millions of times.
  std::array<double, kMaxK> fa_store, fb_store;
  const std::span<double> fa(fa_store.data(), a.size()), fb(fb_store.data(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    fa[i] = flush(s.a, a[i]);
    fb[i] = flush(s.b, b[i]);
  }
  const double fc = flush(s.c, c);
  if (const auto special = special_sum(fa, fb, fc)) return *special;

  const int product_bits = matrix_product_bits(arith, s);
  bool all_negative_zero = std::signbit(fc) && fc == 0;
  std::array<Exact, kMaxK> p_store;
  const std::span<Exact> p(p_store.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Exact x = from_double(fa[i]), y = from_double(fb[i]);
    p[i] = {x.m * y.m, x.e + y.e};
    if (product_bits > 0) p[i] = round_bits(p[i], product_bits, MatrixRounding::nearest_even);
    all_negative_zero = all_negative_zero && p[i].m == 0 && std::signbit(fa[i]) != std::signbit(fb[i]);
  }
  const size_t block = arith.block == 0 ? a.size() : arith.block;
  Exact sum = from_double(fc);
  std::array<Exact, kMaxK + 1> terms;
  for (size_t from = 0; from < p.size(); from += block) {
    const size_t to = std::min(p.size(), from + block);
    size_t n = 0;
    terms[n++] = sum;
    if (arith.order == MatrixOrder::pairwise)
      terms[n++] = pairwise(p.subspan(from, to - from), arith);
    else
      for (size_t i = from; i < to; ++i) terms[n++] = p[i];
    sum = add(std::span<const Exact>(terms.data(), n), arith.sum_bits, arith.alignment, arith.sum_rounding);
  }
  // IEEE: an exact zero sum is +0 unless every term was -0.
  if (sum.m == 0) return all_negative_zero ? -0.0 : 0.0;
  return round_result(s.result, sum, arith.result_rounding, arith.overflow, arith.subnormal_outputs);
}

void matrix_encode_value(MatrixType t, double value, std::byte* out) {
  const MatrixFormat mf = matrix_type_format(t);
  if (!mf.is_float) return matrix_encode(t, value, out);
  const size_t bytes = matrix_type_bytes(t);
  if (t == MatrixType::f64) {
    std::memcpy(out, &value, 8);
    return;
  }
  const FloatFormat f = float_format(t);
  const int width = 1 + mf.exp_bits + mf.man_bits;
  const uint64_t sign = std::signbit(value) ? uint64_t{1} << (width - 1) : 0;
  const uint64_t exp_all = (uint64_t{1} << mf.exp_bits) - 1, man_mask = (uint64_t{1} << mf.man_bits) - 1;
  uint64_t bits = 0;
  if (std::isnan(value)) {
    bits = mf.finite_only ? (exp_all << mf.man_bits) | man_mask
                          : (exp_all << mf.man_bits) | (uint64_t{1} << (mf.man_bits - 1));
  } else if (std::isinf(value)) {
    if (mf.finite_only) throw DeviceError(fmt::format("matrix: {} has no infinity", matrix_type_tag(t)));
    bits = sign | (exp_all << mf.man_bits);
  } else if (value != 0) {
    const double a = std::abs(value);
    const int e = std::max(std::ilogb(a), f.emin());
    const double scaled = std::ldexp(a, mf.man_bits - e);  // the significand as an integer
    const uint64_t field =
        e == f.emin() && a < std::ldexp(1.0, f.emin()) ? 0 : static_cast<uint64_t>(e + f.bias);
    const bool exact = scaled == std::floor(scaled) && a <= f.max_finite();
    if (!exact)
      throw DeviceError(fmt::format("matrix: {} cannot hold {} exactly", matrix_type_tag(t), value));
    bits = sign | (field << mf.man_bits) | (static_cast<uint64_t>(scaled) & man_mask);
  } else {
    bits = sign;
  }
  store_bits(bits, bytes, out);
}

uint64_t matrix_value_bits(MatrixType t, double value) {
  std::byte b[8] = {};
  matrix_encode_value(t, value, b);
  uint64_t out = 0;
  for (size_t i = 0; i < matrix_type_bytes(t); ++i)
    out |= static_cast<uint64_t>(std::to_integer<uint8_t>(b[i])) << (8 * i);
  return out;
}

double matrix_round_to_type(MatrixType t, double x) {
  if (!matrix_type_format(t).is_float || t == MatrixType::f64 || !std::isfinite(x) || x == 0) return x;
  return round_result(t, from_double(x), MatrixRounding::nearest_even, MatrixOverflow::infinity, true);
}

}  // namespace gpuscope
