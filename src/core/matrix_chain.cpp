#include "core/matrix_chain.hpp"

#include "core/error.hpp"
#include "core/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpuscope {
namespace {

struct TypeInfo {
  MatrixType type;
  const char* tag;
  size_t bytes;
  bool is_float, is_signed;
  int exp_bits, man_bits;  // floats: the format's fields (bias 2^(exp_bits-1) - 1)
  bool finite_only;        // f8e4m3: no infinities, all-ones exponent is a normal binade (but S.1111.111 = NaN)
};

constexpr std::array<TypeInfo, 10> kTypes = {{
    {MatrixType::f16, "f16", 2, true, true, 5, 10, false},
    {MatrixType::bf16, "bf16", 2, true, true, 8, 7, false},
    {MatrixType::f32, "f32", 4, true, true, 8, 23, false},
    {MatrixType::f64, "f64", 8, true, true, 11, 52, false},
    {MatrixType::i8, "i8", 1, false, true, 0, 0, false},
    {MatrixType::u8, "u8", 1, false, false, 0, 0, false},
    {MatrixType::i32, "i32", 4, false, true, 0, 0, false},
    {MatrixType::u32, "u32", 4, false, false, 0, 0, false},
    {MatrixType::f8e4m3, "f8e4m3", 1, true, true, 4, 3, true},
    {MatrixType::f8e5m2, "f8e5m2", 1, true, true, 5, 2, false},
}};

const TypeInfo& info(MatrixType t) { return kTypes[static_cast<size_t>(t)]; }

uint64_t load_bits(const std::byte* in, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(std::to_integer<uint8_t>(in[i])) << (8 * i);
  return v;
}

void store_bits(uint64_t v, size_t bytes, std::byte* out) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

// An integer in a binary float format of the given fields, exactly.
uint64_t encode_float_integer(const TypeInfo& t, double value) {
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  const uint64_t sign = value < 0 ? uint64_t{1} << (t.exp_bits + t.man_bits) : 0;
  const double a = std::abs(value);
  if (a == 0) return 0;
  const int e = static_cast<int>(std::floor(std::log2(a)));
  const double frac = std::ldexp(a, -e) - 1;  // in [0, 1)
  const double scaled = std::ldexp(frac, t.man_bits);
  const int max_biased = (1 << t.exp_bits) - (t.finite_only ? 1 : 2);
  if (scaled != std::floor(scaled) || e + bias < 1 || e + bias > max_biased)
    throw DeviceError(fmt::format("matrix: {} cannot hold {} exactly", t.tag, value));
  return sign | (static_cast<uint64_t>(e + bias) << t.man_bits) | static_cast<uint64_t>(scaled);
}

double decode_float(const TypeInfo& t, uint64_t bits) {
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  const uint64_t man_mask = (uint64_t{1} << t.man_bits) - 1;
  const uint64_t exp_all = (uint64_t{1} << t.exp_bits) - 1;
  const bool negative = (bits >> (t.exp_bits + t.man_bits)) & 1;
  const uint64_t eb = (bits >> t.man_bits) & exp_all;
  const uint64_t f = bits & man_mask;
  double v;
  if (eb == 0) {
    v = std::ldexp(static_cast<double>(f), 1 - bias - t.man_bits);
  } else if (eb == exp_all && !t.finite_only) {
    v = f == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (eb == exp_all && f == man_mask) {
    v = std::numeric_limits<double>::quiet_NaN();  // f8e4m3's only NaN
  } else {
    v = std::ldexp(static_cast<double>(f + (uint64_t{1} << t.man_bits)), static_cast<int>(eb) - bias - t.man_bits);
  }
  return negative ? -v : v;
}

}  // namespace

std::string_view matrix_type_tag(MatrixType t) { return info(t).tag; }

std::optional<MatrixType> matrix_type_from_tag(std::string_view tag) {
  for (const auto& t : kTypes)
    if (tag == t.tag) return t.type;
  return std::nullopt;
}

size_t matrix_type_bytes(MatrixType t) { return info(t).bytes; }
bool matrix_type_is_signed(MatrixType t) { return info(t).is_signed; }

MatrixFormat matrix_type_format(MatrixType t) {
  const TypeInfo& ti = info(t);
  return {ti.is_float, ti.exp_bits, ti.man_bits, ti.finite_only};
}

double matrix_exact_integer_limit(MatrixType t) {
  switch (t) {
    case MatrixType::i8: return 127;
    case MatrixType::u8: return 255;
    case MatrixType::i32: return 2147483647.0;
    case MatrixType::u32: return 4294967295.0;
    default: return std::ldexp(1.0, info(t).man_bits + 1);
  }
}

void matrix_encode(MatrixType t, double value, std::byte* out) {
  const TypeInfo& ti = info(t);
  // Integers: their two's-complement or unsigned range; floats: whatever
  // their fields hold exactly (checked as they are encoded).
  const double int_max = matrix_exact_integer_limit(t);
  const double int_min = ti.is_signed ? -int_max - 1 : 0;
  const bool out_of_range = !ti.is_float && (value > int_max || value < int_min);
  if (value != std::floor(value) || out_of_range ||
      (t == MatrixType::f32 && static_cast<double>(static_cast<float>(value)) != value))
    throw DeviceError(fmt::format("matrix: {} cannot hold {} exactly", ti.tag, value));
  if (!ti.is_float) {
    store_bits(static_cast<uint64_t>(static_cast<int64_t>(value)), ti.bytes, out);
  } else if (t == MatrixType::f32) {
    const float f = static_cast<float>(value);
    std::memcpy(out, &f, 4);
  } else if (t == MatrixType::f64) {
    std::memcpy(out, &value, 8);
  } else {
    store_bits(encode_float_integer(ti, value), ti.bytes, out);
  }
}

double matrix_decode(MatrixType t, const std::byte* in) {
  const TypeInfo& ti = info(t);
  const uint64_t bits = load_bits(in, ti.bytes);
  switch (t) {
    case MatrixType::i8: return static_cast<int8_t>(bits);
    case MatrixType::u8: return static_cast<uint8_t>(bits);
    case MatrixType::i32: return static_cast<int32_t>(bits);
    case MatrixType::u32: return static_cast<uint32_t>(bits);
    case MatrixType::f32: {
      float f;
      std::memcpy(&f, in, 4);
      return f;
    }
    case MatrixType::f64: {
      double d;
      std::memcpy(&d, in, 8);
      return d;
    }
    default: return decode_float(ti, bits);
  }
}

std::optional<MatrixChainShape> matrix_chain_shape(std::string_view a, std::string_view b, std::string_view c,
                                                   std::string_view result, uint32_t m, uint32_t n, uint32_t k,
                                                   std::string* why) {
  const auto ta = matrix_type_from_tag(a), tb = matrix_type_from_tag(b), tc = matrix_type_from_tag(c),
             tr = matrix_type_from_tag(result);
  const auto fail = [&](std::string reason) -> std::optional<MatrixChainShape> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  using Tagged = std::pair<std::string_view, std::optional<MatrixType>>;
  for (const Tagged& t : {Tagged{a, ta}, Tagged{b, tb}, Tagged{c, tc}, Tagged{result, tr}})
    if (!t.second) return fail(fmt::format("element type '{}' is not one the matrix family has values for", t.first));
  if (m == 0 || n == 0 || k == 0 || m > 256 || n > 256 || k > 256)
    return fail(fmt::format("shape {}x{}x{} is outside 1..256 on some side", m, n, k));
  // The accumulator holds C + pairs x G + partial sums up to 2k; k beyond
  // what the narrowest accumulator holds exactly leaves no room.
  if (2.0 * k + 8 >= std::min(matrix_exact_integer_limit(*tc), matrix_exact_integer_limit(*tr)))
    return fail(fmt::format("k = {} leaves no exact range in a {} accumulator", k, result));
  return MatrixChainShape{*ta, *tb, *tc, *tr, m, n, k};
}

std::string matrix_shape_tag(const MatrixChainShape& s) {
  std::string types = fmt::format("{}x{}->{}", matrix_type_tag(s.a), matrix_type_tag(s.b), matrix_type_tag(s.result));
  if (s.c != s.result) types += fmt::format("(c {})", matrix_type_tag(s.c));
  return fmt::format("{}.{}x{}x{}", types, s.m, s.n, s.k);
}

std::vector<double> matrix_product(std::span<const double> a, std::span<const double> b, uint32_t m, uint32_t n,
                                   uint32_t k) {
  std::vector<double> p(size_t{m} * n, 0.0);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t kk = 0; kk < k; ++kk) {
      const double x = a[size_t{i} * k + kk];
      if (x == 0) continue;
      for (uint32_t j = 0; j < n; ++j) p[size_t{i} * n + j] += x * b[size_t{kk} * n + j];
    }
  return p;
}

MatrixChainInputs matrix_chain_inputs(const MatrixChainShape& s, uint32_t chains) {
  MatrixChainInputs in;
  in.shape = s;
  in.chains = chains;
  const uint32_t m = s.m, n = s.n, k = s.k;
  const bool all_signed = matrix_type_is_signed(s.a) && matrix_type_is_signed(s.b) && matrix_type_is_signed(s.c) &&
                          matrix_type_is_signed(s.result);
  const double limit = std::min(matrix_exact_integer_limit(s.c), matrix_exact_integer_limit(s.result));
  const bool grows = limit >= std::ldexp(1.0, 24);
  SplitMix64 rng(0x6d61747269780001ULL ^ (uint64_t{m} << 40) ^ (uint64_t{n} << 20) ^ k);

  in.a.resize(size_t{m} * k);
  in.b.resize(size_t{k} * n);
  in.b2.resize(size_t{k} * n);
  if (all_signed) {
    // Dense A and B of -1, 0, 1; B2 = -B + E with E[kk][j] = 1 where
    // kk = j % k, so G = A x E is A[i][j % k]: entries -1, 0, 1. E = 0
    // where the accumulator is narrow (the chain returns to C every pair).
    for (auto& v : in.a) v = static_cast<double>(rng.below(3)) - 1;
    for (auto& v : in.b) v = static_cast<double>(rng.below(3)) - 1;
    for (uint32_t kk = 0; kk < k; ++kk)
      for (uint32_t j = 0; j < n; ++j) {
        const double e = grows && kk == j % k ? 1 : 0;
        in.b2[size_t{kk} * n + j] = -in.b[size_t{kk} * n + j] + e;
      }
  } else {
    // Nothing negative anywhere: A picks row i % k of B (A[i][i % k] = 1),
    // B is 0 or 1, B2 = B, so G = 2 x B[i % k][j].
    for (uint32_t i = 0; i < m; ++i) in.a[size_t{i} * k + i % k] = 1;
    for (auto& v : in.b) v = static_cast<double>(rng.below(2));
    in.b2 = in.b;
  }
  in.c.resize(size_t{chains} * m * n);
  for (uint32_t j = 0; j < chains; ++j)
    for (uint32_t r = 0; r < m; ++r)
      for (uint32_t col = 0; col < n; ++col) {
        const double v = static_cast<double>((r * 5 + col * 3 + j * 7) % 9);
        in.c[(size_t{j} * m + r) * n + col] = all_signed ? v - 4 : v;
      }

  std::vector<double> sum_b(in.b.size());
  for (size_t i = 0; i < sum_b.size(); ++i) sum_b[i] = in.b[i] + in.b2[i];
  in.growth = matrix_product(in.a, sum_b, m, n, k);

  double max_g = 0, max_c = 0;
  for (double g : in.growth) max_g = std::max(max_g, std::abs(g));
  for (double c : in.c) max_c = std::max(max_c, std::abs(c));
  // Within one multiply-add the partial sums add at most 2k to the
  // accumulator (entries of A at most 1, of B and B2 at most 2).
  const double room = limit - max_c - 2.0 * k;
  in.max_pairs = max_g == 0 ? UINT32_MAX : static_cast<uint64_t>(std::min<double>(UINT32_MAX, std::floor(room / max_g)));

  const auto encode_all = [](MatrixType t, const std::vector<double>& v) {
    std::vector<std::byte> out(v.size() * matrix_type_bytes(t));
    for (size_t i = 0; i < v.size(); ++i) matrix_encode(t, v[i], out.data() + i * matrix_type_bytes(t));
    return out;
  };
  in.a_bytes = encode_all(s.a, in.a);
  in.b_bytes = encode_all(s.b, in.b);
  in.b2_bytes = encode_all(s.b, in.b2);
  in.c_bytes = encode_all(s.c, in.c);
  return in;
}

std::vector<double> matrix_chain_expected(const MatrixChainInputs& in, uint32_t j, uint64_t pairs) {
  const size_t mn = size_t{in.shape.m} * in.shape.n;
  std::vector<double> d(in.c.begin() + static_cast<ptrdiff_t>(j * mn),
                        in.c.begin() + static_cast<ptrdiff_t>((j + 1) * mn));
  for (size_t i = 0; i < mn; ++i) d[i] += static_cast<double>(pairs) * in.growth[i];
  return d;
}

std::string matrix_chain_check(const MatrixChainInputs& in, uint64_t pairs, uint64_t subgroups,
                               std::span<const std::byte> out) {
  const size_t mn = size_t{in.shape.m} * in.shape.n;
  const size_t eb = matrix_type_bytes(in.shape.result);
  if (out.size() < subgroups * in.chains * mn * eb)
    return fmt::format("{} bytes of results, {} expected", out.size(), subgroups * in.chains * mn * eb);
  for (uint32_t j = 0; j < in.chains; ++j) {
    const std::vector<double> want = matrix_chain_expected(in, j, pairs);
    for (uint64_t g = 0; g < subgroups; ++g) {
      const std::byte* base = out.data() + (g * in.chains + j) * mn * eb;
      for (size_t i = 0; i < mn; ++i) {
        const double got = matrix_decode(in.shape.result, base + i * eb);
        if (got != want[i])
          return fmt::format("subgroup {} accumulator {} element ({}, {}) is {}, the host says {} after {} pairs", g,
                             j, i / in.shape.n, i % in.shape.n, got, want[i], pairs);
      }
    }
  }
  return "";
}

}  // namespace gpuscope
