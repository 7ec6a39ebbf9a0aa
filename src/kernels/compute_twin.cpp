#include "kernels/compute_twin.hpp"

#include "core/random.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gpuscope::compute_twin {
namespace {

// name, kernel, map, types, program, vectors, latency, independent floats, packed half, need,
// finding type, flop per op, counted. compute.cl's op sets (its #if blocks)
// are this table's `types`, `program`, `vectors` and `latency` columns.
const Op kOps[] = {
    {"add", "ADD", Map::Add, kFloats | kInts, Program::Fast, true, true, false, true, Need::None, "", 1,
     "one add (floats: x+y then y-x, a rotation; integers: Fibonacci pairs)"},
    {"mul", "MUL", Map::Mul, kFloats | kInts, Program::Fast, true, true, false, true, Need::None, "", 1, "one multiply"},
    {"fma", "FMA", Map::Fma, kFloats, Program::Fast, true, true, true, true, Need::None, "", 2, "one fma(v, a, b)"},
    {"mad", "MAD", Map::Fma, kFloats | kInts, Program::Fast, true, true, true, false, Need::None, "", 2,
     "one mad(v, a, b) (integers: v*a+b)"},
    {"div", "DIV", Map::Div, kFloats | kInts, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one division a/v (integers: a/(v|1), an OR beside each division)"},
    {"sqrt", "SQRT", Map::Sqrt, kFloats, Program::Slow, false, true, false, false, Need::None, "", 1, "one sqrt"},
    {"rsqrt", "RSQRT", Map::Rsqrt, kFloats, Program::Slow, false, true, false, false, Need::None, "", 1, "one rsqrt"},
    {"exp", "EXP", Map::Exp, kFloats, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one exp(-v) (negation is a free source modifier)"},
    {"log", "LOG", Map::Log, kFloats, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one log(v*a): a multiply beside each log"},
    {"sin", "SIN", Map::Sin, kFloats, Program::Slow, false, true, false, false, Need::None, "", 1, "one sin"},
    {"native_divide", "NATIVE_DIVIDE", Map::Div, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_divide(a, v)"},
    {"native_sqrt", "NATIVE_SQRT", Map::Sqrt, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_sqrt"},
    {"native_rsqrt", "NATIVE_RSQRT", Map::Rsqrt, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_rsqrt"},
    {"native_exp", "NATIVE_EXP", Map::Exp, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_exp(-v)"},
    {"native_log", "NATIVE_LOG", Map::Log, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_log(v*a): a multiply beside each log"},
    {"native_sin", "NATIVE_SIN", Map::Sin, kFp32 | kFp16, Program::Slow, false, true, false, false, Need::None, "", 1,
     "one native_sin"},
    {"cvt", "CVT", Map::Cvt, kInt32, Program::Own, false, true, false, false, Need::None, "", 1,
     "one conversion: int32->fp32 and fp32->int32 alternate, with a multiply by 1.0f (unknown to the "
     "compiler) beside each pair"},
    {"dp4a", "DP4A", Map::Dp4a, kInt32, Program::Own, false, true, false, false, Need::Dp4a, "int8", 8,
     "one dp4a: 4 int8 products summed into an int32 accumulator = 8 int8 ops (PTX dp4a.s32.s32; through "
     "Vulkan, SPIR-V OpSDot on packed 4x8-bit operands, then the add)"},
    {"mix_fma_add", "MIX_FMA_ADD", Map::MixFmaAdd, kFp32, Program::Fast, false, false, false, false, Need::None, "", 1,
     "fp32 fma and fp32 add chains interleaved half and half; ops of both kinds counted"},
    {"mix_fma_iadd", "MIX_FMA_IADD", Map::MixFmaIadd, kFp32, Program::Fast, false, false, false, false, Need::None, "", 1,
     "fp32 fma and int32 add chains interleaved half and half; ops of both kinds counted"},
};

bool is_float(Scalar s) { return scalar_is_float(s); }

}  // namespace

std::span<const Op> ops() { return kOps; }

const Op* find_op(std::string_view name) {
  for (const Op& o : kOps)
    if (name == o.name) return &o;
  return nullptr;
}

const Op* find_kernel(std::string_view kernel) {
  for (const Op& o : kOps)
    if (kernel == o.kernel) return &o;
  return nullptr;
}

unsigned type_bit(Scalar scalar) {
  switch (scalar) {
    case Scalar::f64: return kFp64;
    case Scalar::f32: return kFp32;
    case Scalar::f16: return kFp16;
    case Scalar::i64: return kInt64;
    case Scalar::i32: return kInt32;
    case Scalar::i16: return kInt16;
    case Scalar::i8: return kInt8;
    default: return 0;
  }
}

bool holds(const Op& op, Scalar scalar, int vec, bool ptx_f16x2, bool throughput, bool vendor) {
  if (ptx_f16x2) return vec == 1 && op.packed_half;
  if ((op.types & type_bit(scalar)) == 0) return false;
  if (!throughput && !op.latency) return false;
  if (vec != 1 && (!throughput || !op.vectors)) return false;
  if (op.need == Need::Dp4a && !vendor) return false;
  return true;
}

// ------------------------------------------------------------ element values

uint16_t half_bits(double v) {
  const auto f = static_cast<float>(v);
  if (std::isnan(f)) return 0x7e00u;
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    // Subnormal: a multiple of 2^-24, rounded to nearest even; 1024 of them
    // carry into the smallest normal exponent, which the bits express as is.
    const double steps = std::nearbyint(std::abs(static_cast<double>(f)) * 16777216.0);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(steps));
  }
  const uint32_t mant = u & 0x7fffffu;
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: still right
  return static_cast<uint16_t>(h);
}

double half_value(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

int64_t wrap(uint64_t v, size_t bytes) {
  if (bytes >= 8) return static_cast<int64_t>(v);
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  const uint64_t m = (uint64_t{1} << bits) - 1;
  v &= m;
  if (v >> (bits - 1)) v |= ~m;  // sign-extend
  return static_cast<int64_t>(v);
}

Value load_value(Scalar scalar, const std::byte* p, bool as_int) {
  Value v;
  if (as_int || !is_float(scalar)) {
    const size_t bytes = as_int ? 4 : scalar_bytes(scalar);
    uint64_t u = 0;
    std::memcpy(&u, p, bytes);
    v.i = wrap(u, bytes);
  } else if (scalar == Scalar::f16) {
    uint16_t h = 0;
    std::memcpy(&h, p, 2);
    v.f = half_value(h);
  } else if (scalar == Scalar::f32) {
    float f = 0;
    std::memcpy(&f, p, 4);
    v.f = f;
  } else {
    std::memcpy(&v.f, p, 8);
  }
  return v;
}

void store_value(Scalar scalar, const Value& v, std::byte* p, bool as_int) {
  if (as_int || !is_float(scalar)) {
    const auto u = static_cast<uint64_t>(v.i);
    std::memcpy(p, &u, as_int ? 4 : scalar_bytes(scalar));
  } else if (scalar == Scalar::f16) {
    const uint16_t h = half_bits(v.f);
    std::memcpy(p, &h, 2);
  } else if (scalar == Scalar::f32) {
    const auto f = static_cast<float>(v.f);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &v.f, 8);
  }
}

std::vector<Value> load_block(const Op& op, Scalar scalar, std::span<const std::byte> bytes) {
  const size_t sb = scalar_bytes(scalar);
  std::vector<Value> out(bytes.size() / sb);
  for (size_t k = 0; k < out.size(); ++k) out[k] = load_value(scalar, bytes.data() + k * sb, int_lane(op, k));
  return out;
}

std::vector<std::byte> store_block(const Op& op, Scalar scalar, std::span<const Value> block) {
  const size_t sb = scalar_bytes(scalar);
  std::vector<std::byte> out(block.size() * sb);
  for (size_t k = 0; k < block.size(); ++k) store_value(scalar, block[k], out.data() + k * sb, int_lane(op, k));
  return out;
}

// ------------------------------------------------------------ parameters and seeds

double device_round(Scalar scalar, double v) {
  if (scalar == Scalar::f16) return round_half(v);
  if (scalar == Scalar::f32) return static_cast<float>(v);
  return v;
}

Params params_for(const Op& op, Scalar scalar) {
  Params p;
  switch (op.map) {
    case Map::Mul:
      p.fa = 1 + std::ldexp(1, -10);
      p.fb = 1 - std::ldexp(1, -10);
      break;
    case Map::Fma:
    case Map::MixFmaAdd:
    case Map::MixFmaIadd:
      p.fa = 0.75;
      p.fb = 0.25;
      break;
    case Map::Div:
      p.fa = 1.5;
      p.fb = 1.5 * (1 + std::ldexp(1, -20));
      break;
    case Map::Log: p.fa = 10; break;
    default: break;
  }
  if (is_float(scalar)) return p;
  const size_t bytes = scalar_bytes(scalar);
  const int bits = static_cast<int>(bytes * 8);
  switch (op.map) {
    case Map::Fma:
      p.ia = 0x2f3b5c6d1e2f4a5bLL | 1;
      p.ib = 0x1234567876543211LL;
      break;
    case Map::Div: p.ia = (int64_t{1} << (bits - 2)) + 12345 % (int64_t{1} << (bits - 3)); break;
    case Map::Cvt: p.ia = std::bit_cast<uint32_t>(1.0f); break;
    case Map::Dp4a:
      p.ia = static_cast<int32_t>(0x7f03fd05u);  // bytes 5, -3, 3, 127
      p.ib = 17;
      break;
    default: break;
  }
  p.ia = wrap(static_cast<uint64_t>(p.ia), bytes);
  p.ib = wrap(static_cast<uint64_t>(p.ib), bytes);
  return p;
}

std::vector<Value> make_seeds(const Op& op, Scalar scalar, size_t values, uint64_t seed) {
  std::vector<Value> out(values);
  SplitMix64 rng(seed);
  for (size_t k = 0; k < values; ++k) {
    const uint64_t r = rng.next();
    if (!is_float(scalar)) {
      int64_t v = wrap(r, scalar_bytes(scalar));
      if (op.map == Map::Mul) v |= 1;                          // odd: products never reach 0
      if (op.map == Map::Cvt) v = static_cast<int32_t>(r) >> 2;  // |v| < 2^29: a float converts back in range
      out[k].i = v;
      continue;
    }
    // [0.5, 2): positive (sqrt, log), O(1) (no overflow anywhere).
    const double f = device_round(scalar, 0.5 + 1.5 * static_cast<double>(r >> 11) * std::ldexp(1, -53));
    if (int_lane(op, k))
      out[k].i = std::bit_cast<int32_t>(static_cast<float>(f));
    else
      out[k].f = f;
  }
  return out;
}

double tolerance(Scalar scalar) {
  if (scalar == Scalar::f16) return 4e-2;
  if (scalar == Scalar::f32) return 2e-3;
  return 1e-9;
}

// ------------------------------------------------------------ the maps

namespace {

struct FloatMaps {
  Arith arith;
  double r(double v) const {
    if (arith.rounding == Rounding::None) return v;
    return device_round(arith.scalar, v);
  }
  double fma(double v, double a, double b) const {
    if (arith.rounding == Rounding::None) return v * a + b;
    if (arith.scalar == Scalar::f32)
      return std::fma(static_cast<float>(v), static_cast<float>(a), static_cast<float>(b));
    return r(std::fma(v, a, b));
  }
  // One map v -> g(v) of a one-operand op; p: the operand it uses (a).
  double unary(Map m, double v, double p) const {
    switch (m) {
      case Map::Sqrt: return r(std::sqrt(v));
      case Map::Rsqrt: return r(1 / std::sqrt(v));
      case Map::Exp: return r(std::exp(-v));
      case Map::Log: return r(std::log(r(v * p)));
      case Map::Sin: return r(std::sin(v));
      default: throw std::logic_error("compute twin: no unary float map");
    }
  }
  // One step (two ops) of chain (x, y); `independent`: TP_STEP_FMA/MAD.
  void step(Map m, bool independent, double& x, double& y, double a, double b) const {
    switch (m) {
      case Map::Add:
        x = r(x + y);
        y = r(y - x);
        return;
      case Map::Mul:
        x = r(y * a);
        y = r(x * b);
        return;
      case Map::Fma:
        if (independent) {
          x = fma(x, a, b);
          y = fma(y, a, b);
        } else {
          x = fma(y, a, b);
          y = fma(x, a, b);
        }
        return;
      case Map::Div:
        x = r(a / y);
        y = r(b / x);
        return;
      default:
        x = unary(m, y, a);
        y = unary(m, x, a);
    }
  }
};

struct IntMaps {
  size_t bytes;
  int64_t w(uint64_t v) const { return wrap(v, bytes); }
  void step(Map m, int64_t& x, int64_t& y, int64_t a, int64_t b) const {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    switch (m) {
      case Map::Add:
        x = w(u(x) + u(y));
        y = w(u(y) + u(x));
        return;
      case Map::Mul:
        x = w(u(x) * u(y));
        y = w(u(y) * u(x));
        return;
      case Map::Fma:  // integer mad: v*a+b
        x = w(u(y) * u(a) + u(b));
        y = w(u(x) * u(a) + u(b));
        return;
      case Map::Div: {
        // a / (v | 1): v | 1 is never 0; INT_MIN / -1 cannot occur with the
        // probe's positive a, and is the GPU's wrap here.
        const auto div = [&](int64_t num, int64_t den) { return den == -1 ? w(0 - u(num)) : w(u(num / den)); };
        x = div(a, y | 1);
        y = div(a, x | 1);
        return;
      }
      case Map::Cvt: {
        const float one = std::bit_cast<float>(static_cast<uint32_t>(a));
        // convert_int_rtz: truncation; |v| < 2^29 keeps it in range.
        const auto cvt = [&](int64_t v) {
          const double f = static_cast<double>(static_cast<float>(static_cast<int32_t>(v)) * one);
          return static_cast<int64_t>(static_cast<int32_t>(std::clamp(std::trunc(f), -2147483648.0, 2147483647.0)));
        };
        x = cvt(y);
        y = cvt(x);
        return;
      }
      case Map::Dp4a: {
        const auto dot = [&](int64_t p) {
          int64_t s = static_cast<int32_t>(b);
          for (int k = 0; k < 4; ++k)
            s += static_cast<int8_t>((u(p) >> (8 * k)) & 0xff) * static_cast<int8_t>((u(a) >> (8 * k)) & 0xff);
          return wrap(u(s), 4);
        };
        x = dot(y);
        y = dot(x);
        return;
      }
      default: throw std::logic_error("compute twin: no integer map");
    }
  }
};

}  // namespace

void run_block(const Op& op, const Arith& arith, int chains, int vec, uint64_t steps, bool throughput,
               const Value& a, const Value& b, std::span<Value> block) {
  const FloatMaps fm{arith};
  if (op.map == Map::MixFmaIadd) {
    // Per chain pair: [x, y, p, q], x and y fp32, p and q int32.
    const IntMaps im{4};
    for (int c = 0; c < chains / 2; ++c) {
      double& x = block[4 * c].f;
      double& y = block[4 * c + 1].f;
      int64_t& p = block[4 * c + 2].i;
      int64_t& q = block[4 * c + 3].i;
      for (uint64_t s = 0; s < steps; ++s) {
        fm.step(Map::Fma, false, x, y, a.f, b.f);
        im.step(Map::Add, p, q, 0, 0);
      }
    }
    return;
  }
  const bool floats = is_float(arith.scalar);
  const IntMaps im{scalar_bytes(arith.scalar)};
  const bool independent = throughput && floats && op.independent_floats && !arith.packed_half;
  for (int c = 0; c < chains; ++c) {
    // The fp32 mix: even chains fma, odd chains add (STEP_FMA, STEP_ADD).
    const Map m = op.map == Map::MixFmaAdd ? (c % 2 == 0 ? Map::Fma : Map::Add) : op.map;
    for (int l = 0; l < vec; ++l) {
      Value& x = block[static_cast<size_t>(2 * c) * vec + l];
      Value& y = block[static_cast<size_t>(2 * c + 1) * vec + l];
      for (uint64_t s = 0; s < steps; ++s) {
        if (floats)
          fm.step(m, independent, x.f, y.f, a.f, b.f);
        else
          im.step(m, x.i, y.i, a.i, b.i);
      }
    }
  }
}

}  // namespace gpuscope::compute_twin
