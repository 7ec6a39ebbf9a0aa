// Sim family `compute` (src/kernels/opencl/compute.cl): tp_<OP> (CHAINS independent chains per
// work-item, throughput) and lat_<OP> (one chain in one work-item, latency),
// for the float ops (KIND_FLOAT: float, half, double), the integer ops
// (KIND_INT: long, int, short, char) and the two mixes. The NVIDIA PTX half
// path (KIND_PTX_F16X2) and dp4a need inline PTX, which no sim device
// accepts: a launch of them is Unsupported.
//
// Semantics: the OpenCL C's maps (compute.cl's STEP_* / TP_STEP_* macros),
// lane by lane. Floats are evaluated in double and rounded to the element
// type after every op (float, or IEEE binary16 round-to-nearest-even for
// half): within an ulp or so of a GPU, which is what the probe's tolerance
// allows; integers exactly, wrapped to the type's width after every op.
// A work-item's result depends only on its seeds, so each launch computes
// every distinct seed block once and copies the result to the work-items
// that share it (the probe repeats 512 work-items' seeds over the rest).
//
// Departure from family.hpp's contract, said plainly: the timed launches
// run up to hundreds of millions of ops per work-item pattern, which no
// C++ loop does in the seconds a sim run may take. A launch whose distinct
// work exceeds kMaxComputedOps does not compute its outputs; it fills them
// with 0xff bytes (NaN for floats, -1 for integers), so a reader cannot take
// them for results. The probe validates only one-trip launches, which are
// far below the cap and computed in full.
//
// Time: ops / (rate per clock per core x shader cores x clock) for tp_,
// ops x the op's dependent latency for lat_. Rates come from the
// description's rates.ops (per value: a float4 op is 4 values); an op it
// does not list is derived from one it does, by the rules of rate() below,
// each one an assumption the description can override by listing the op.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

namespace gpuscope::sim {
namespace {

// Distinct lane-ops one launch computes: 2x a one-trip validation launch of
// the probe's largest form (512 seed patterns x 8 chains x 32 steps x 2 ops
// x 4 lanes); slow ops (precise sin, exp, ... in double) an eighth of it.
constexpr double kMaxComputedOps = 2.0 * 1024 * 1024;
double computed_cap(const std::string& op);

// The ops of compute.cl, as in its kernel names (tp_NATIVE_SIN).
const char* const kFloatOps[] = {
    "ADD", "MUL", "FMA",           "MAD",         "DIV",          "SQRT",       "RSQRT",      "EXP",
    "LOG", "SIN", "NATIVE_DIVIDE", "NATIVE_SQRT", "NATIVE_RSQRT", "NATIVE_EXP", "NATIVE_LOG", "NATIVE_SIN"};
const char* const kIntOnlyOps[] = {"CVT", "DP4A"};

bool is_slow(const std::string& op) {
  return op == "DIV" || op == "SQRT" || op == "RSQRT" || op == "EXP" || op == "LOG" || op == "SIN" ||
         op.rfind("NATIVE_", 0) == 0;
}

double computed_cap(const std::string& op) { return is_slow(op) ? kMaxComputedOps / 8 : kMaxComputedOps; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ------------------------------------------------------------ element types

enum class Kind { Float, Int };

struct Elem {
  Kind kind = Kind::Float;
  std::string scalar;  // the description's type name: float half double long int short char
  size_t bytes = 4;
  int vec = 1;
};

Elem elem_of(SimLaunch& l) {
  const KernelSpec& spec = l.spec();
  if (spec.word("kind") == "PTX_F16X2")
    throw Unsupported("sim: compute's NVIDIA inline-PTX half path (no sim device accepts inline PTX)");
  const auto scalar = spec.scalar("scalar");
  if (!scalar) throw DeviceError("sim: compute built without a scalar type");
  // The description's type names (SimConfig::rates), which are OpenCL C's.
  static const std::map<Scalar, std::pair<const char*, Kind>> types = {
      {Scalar::f32, {"float", Kind::Float}}, {Scalar::f16, {"half", Kind::Float}},
      {Scalar::f64, {"double", Kind::Float}}, {Scalar::i64, {"long", Kind::Int}},
      {Scalar::i32, {"int", Kind::Int}},      {Scalar::i16, {"short", Kind::Int}},
      {Scalar::i8, {"char", Kind::Int}}};
  const auto it = types.find(*scalar);
  if (it == types.end()) throw Unsupported(fmt::format("sim: compute with scalar {}", scalar_tag(*scalar)));
  Elem e;
  e.scalar = it->second.first;
  e.kind = it->second.second;
  e.bytes = scalar_bytes(*scalar);
  if (spec.word("kind") == "FLOAT" && e.kind != Kind::Float)
    throw DeviceError("sim: kind FLOAT with an integer scalar");
  if (spec.word("kind") == "INT" && e.kind != Kind::Int) throw DeviceError("sim: kind INT with a float scalar");
  e.vec = static_cast<int>(l.spec().integer("vec", 1));
  if (e.vec != 1 && e.vec != 2 && e.vec != 4 && e.vec != 8 && e.vec != 16)
    throw DeviceError(fmt::format("sim: compute with vec = {}", e.vec));
  return e;
}

// IEEE binary16 round to nearest even, returned as the value it stands for.
double round_half(double v) {
  const auto f = static_cast<float>(v);
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  const uint32_t mant = u & 0x7fffffu;
  uint32_t h;
  if (std::isnan(f)) {
    h = 0x7e00u;
  } else if (exp >= 31) {
    h = sign | 0x7c00u;
  } else if (exp <= 0) {
    // Subnormal halves: the maps never reach them; round through the
    // subnormal step all the same.
    const double step = std::ldexp(1.0, -24);
    return std::nearbyint(static_cast<double>(f) / step) * step;
  } else {
    h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  }
  const int hs = (h & 0x8000) ? -1 : 1;
  const int he = (h >> 10) & 0x1f;
  const int hm = h & 0x3ff;
  if (he == 31) return hm ? std::nan("") : hs * INFINITY;
  return hs * std::ldexp(1024 + hm, he - 25);
}

uint16_t half_bits_of(double v) {  // v already a half value
  if (std::isnan(v)) return 0x7e00u;
  const uint16_t sign = std::signbit(v) ? 0x8000u : 0;
  v = std::abs(v);
  if (std::isinf(v)) return sign | 0x7c00u;
  if (v == 0) return sign;
  int e = 0;
  const double m = std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
  const int he = e - 1 + 15;
  if (he <= 0)
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::lround(v / std::ldexp(1.0, -24))));
  return static_cast<uint16_t>(sign | (he << 10) | (static_cast<int>(std::lround(m * 2048)) - 1024));
}

double half_from_bits(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

// Element `k` of a byte block, as double (floats) or wrapped int64 (ints).
struct Value {
  double f = 0;
  int64_t i = 0;
};

int64_t wrap(uint64_t v, size_t bytes) {
  if (bytes == 8) return static_cast<int64_t>(v);
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  const uint64_t m = (uint64_t{1} << bits) - 1;
  v &= m;
  if (v >> (bits - 1)) v |= ~m;
  return static_cast<int64_t>(v);
}

Value load_value(const Elem& e, const std::byte* p) {
  Value v;
  if (e.kind == Kind::Int) {
    uint64_t u = 0;
    std::memcpy(&u, p, e.bytes);  // little-endian host, as the devices modelled
    v.i = wrap(u, e.bytes);
  } else if (e.bytes == 2) {
    uint16_t h = 0;
    std::memcpy(&h, p, 2);
    v.f = half_from_bits(h);
  } else if (e.bytes == 4) {
    float f = 0;
    std::memcpy(&f, p, 4);
    v.f = f;
  } else {
    std::memcpy(&v.f, p, 8);
  }
  return v;
}

void store_value(const Elem& e, const Value& v, std::byte* p) {
  if (e.kind == Kind::Int) {
    const auto u = static_cast<uint64_t>(v.i);
    std::memcpy(p, &u, e.bytes);
  } else if (e.bytes == 2) {
    const uint16_t h = half_bits_of(v.f);
    std::memcpy(p, &h, 2);
  } else if (e.bytes == 4) {
    const auto f = static_cast<float>(v.f);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &v.f, 8);
  }
}

// ------------------------------------------------------------ the maps

struct FloatMaps {
  size_t bytes;
  double r(double v) const {
    if (bytes == 4) return static_cast<float>(v);
    if (bytes == 2) return round_half(v);
    return v;
  }
  double fma(double v, double a, double b) const {
    if (bytes == 4) return std::fma(static_cast<float>(v), static_cast<float>(a), static_cast<float>(b));
    return r(std::fma(v, a, b));
  }
  // One map of a slow op (v -> g(v)); p: the param the map uses (a or b).
  double slow(const std::string& op, double v, double p) const {
    if (op == "SQRT" || op == "NATIVE_SQRT") return r(std::sqrt(v));
    if (op == "RSQRT" || op == "NATIVE_RSQRT") return r(1 / std::sqrt(v));
    if (op == "EXP" || op == "NATIVE_EXP") return r(std::exp(-v));
    if (op == "LOG" || op == "NATIVE_LOG") return r(std::log(r(v * p)));
    if (op == "SIN" || op == "NATIVE_SIN") return r(std::sin(v));
    throw std::logic_error("sim compute: no float map " + op);
  }
  // One step (two ops) of chain (x, y). `independent`: TP_STEP_FMA/MAD.
  void step(const std::string& op, bool independent, double& x, double& y, double a, double b) const {
    if (op == "ADD") {
      x = r(x + y);
      y = r(y - x);
    } else if (op == "MUL") {
      x = r(y * a);
      y = r(x * b);
    } else if (op == "FMA" || op == "MAD") {
      if (independent) {
        x = fma(x, a, b);
        y = fma(y, a, b);
      } else {
        x = fma(y, a, b);
        y = fma(x, a, b);
      }
    } else if (op == "DIV" || op == "NATIVE_DIVIDE") {
      x = r(a / y);
      y = r(b / x);
    } else {
      x = slow(op, y, a);
      y = slow(op, x, a);
    }
  }
};

struct IntMaps {
  size_t bytes;
  int64_t w(uint64_t v) const { return wrap(v, bytes); }
  void step(const std::string& op, int64_t& x, int64_t& y, int64_t a, int64_t b) const {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    if (op == "ADD") {
      x = w(u(x) + u(y));
      y = w(u(y) + u(x));
    } else if (op == "MUL") {
      x = w(u(x) * u(y));
      y = w(u(y) * u(x));
    } else if (op == "MAD") {
      x = w(u(y) * u(a) + u(b));
      y = w(u(x) * u(a) + u(b));
    } else if (op == "DIV") {
      // a / (v | 1): v | 1 is never 0; INT_MIN / -1 cannot occur with the
      // probe's positive a, but is defined here as the GPU's wrap.
      const auto div = [&](int64_t num, int64_t den) {
        if (den == -1) return w(0 - u(num));
        return w(u(num / den));
      };
      x = div(a, y | 1);
      y = div(a, x | 1);
    } else if (op == "CVT") {
      const float one = std::bit_cast<float>(static_cast<uint32_t>(a));
      const auto cvt = [&](int64_t v) {
        const double f = static_cast<double>(static_cast<float>(static_cast<int32_t>(v)) * one);
        // convert_int_rtz: truncation; out-of-range saturates only with _sat,
        // never reached by the probe's |v| < 2^29.
        return static_cast<int64_t>(
            static_cast<int32_t>(std::clamp(std::trunc(f), -2147483648.0, 2147483647.0)));
      };
      x = cvt(y);
      y = cvt(x);
    } else {
      throw Unsupported("sim: compute integer op " + op);
    }
  }
};

// ------------------------------------------------------------ rates

// Rate of (type, op) in values per clock per core, resolved from the
// description. Every fallback is an assumption, listed here:
// - fma and mad stand for each other (one unit executes both);
// - fp32 fma with rates.fma_emulated runs in software: one wave takes
//   fma_emulated_cycles_per_wave on one unit;
// - add and mul unlisted run at the type's fma/mad rate; an unlisted
//   fma/mad runs at the type's mul, then add rate;
// - a type with no listed op: half, short and char as their 32-bit
//   counterparts (int as float), long at half the int rate for add, a
//   quarter for mul and mad (64-bit arithmetic from 32-bit parts), double at
//   1/16 of float;
// - native_* ops run on the special-function unit at
//   special_function_rate x the base fp32 rate (fp32 mad/fma); their precise
//   forms take the native op plus a sequence around it: div, sqrt, rsqrt at
//   half the native rate, exp and log at a third, sin at a quarter (range
//   reduction); integer division at 1/16 of the type's mul rate; cvt (two
//   conversions and a multiply per map) at the float mul rate;
// - dp4a: no sim device offers inline PTX.
class Rates {
 public:
  explicit Rates(const SimConfig& c) : c_(c) {}

  // The description's type name of an OpenCL C scalar.
  static std::string type_of(const std::string& scalar) {
    if (scalar == "int") return "int";
    return scalar;  // float half double long short char: the same names
  }

  std::optional<double> listed(const std::string& type, const std::string& op) const {
    for (const auto& o : c_.rates.ops)
      if (o.type == type && o.op == op) return o.per_clock_per_core;
    return std::nullopt;
  }

  double base_fp32() const {
    if (auto v = listed("float", "mad")) return *v;
    if (auto v = listed("float", "fma"); v && !c_.rates.fma_emulated) return *v;
    if (auto v = listed("float", "mul")) return *v;
    if (auto v = listed("float", "add")) return *v;
    return static_cast<double>(c_.core.units_per_core) * c_.core.lanes_per_unit;  // one op per lane per clock
  }

  bool type_listed(const std::string& type) const {
    return std::any_of(c_.rates.ops.begin(), c_.rates.ops.end(),
                       [&](const OpRate& o) { return o.type == type; });
  }

  // Rate of one of add mul fma mad within a type, by the rules above.
  double basic(const std::string& type, const std::string& op) const {
    if (type == "float" && op == "fma" && c_.rates.fma_emulated && !listed("float", "fma"))
      return emulated_fma();
    if (auto v = listed(type, op)) return *v;
    if (type_listed(type)) {
      const std::string other = op == "fma" ? "mad" : op == "mad" ? "fma" : "";
      if (!other.empty())
        if (auto v = listed(type, other)) return *v;
      for (const char* o : {"fma", "mad", "mul", "add"})
        if (auto v = listed(type, o)) return *v;
    }
    if (type == "float") return base_fp32();
    if (type == "half") return basic("float", op);
    if (type == "int" || type == "short" || type == "char")
      return type == "int" ? basic("float", op == "fma" ? "mad" : op) : basic("int", op);
    if (type == "long") return basic("int", op) / (op == "add" ? 2 : 4);
    if (type == "double") return basic("float", op) / 16;
    throw Unsupported("sim: no rate for type " + type);
  }

  double emulated_fma() const {
    const double cycles = c_.rates.fma_emulated_cycles_per_wave;
    if (cycles <= 0) return base_fp32() / 16;
    return static_cast<double>(c_.core.units_per_core) * c_.core.wave_width / cycles;
  }

  // Rate of a compute.cl op (upper case) on `scalar`.
  double of(const std::string& scalar, const std::string& op_upper) const {
    const std::string type = type_of(scalar);
    const std::string op = lower(op_upper);
    if (auto v = listed(type, op)) return *v;
    if (op == "add" || op == "mul" || op == "fma" || op == "mad") return basic(type, op);
    const bool is_float = type == "float" || type == "half" || type == "double";
    if (!is_float) {
      if (op == "div") return basic(type, "mul") / 16;
      if (op == "cvt") return basic("float", "mul");
      throw Unsupported("sim: no rate model for " + type + " " + op);
    }
    // Special functions: relative to the base fp32 rate, scaled like the
    // type's basic rate is to fp32's.
    const double type_scale = basic(type, "mul") / basic("float", "mul");
    const double native = c_.rates.special_function_rate * base_fp32() * type_scale;
    if (op.rfind("native_", 0) == 0) return native;
    if (op == "div" || op == "sqrt" || op == "rsqrt") return native / 2;
    if (op == "exp" || op == "log") return native / 3;
    if (op == "sin") return native / 4;
    throw Unsupported("sim: no rate model for " + type + " " + op);
  }

  // Dependent latency of one op in ns: the description's latency_ns when
  // given, else a 4-stage pipeline at the op's issue rate: 4 x (lanes of a
  // core / rate) clocks, at least 4.
  double latency_ns(const std::string& scalar, const std::string& op_upper) const {
    const std::string type = type_of(scalar);
    for (const auto& o : c_.rates.ops)
      if (o.type == type && o.op == lower(op_upper) && o.latency_ns > 0) return o.latency_ns;
    const double lanes = static_cast<double>(c_.core.units_per_core) * c_.core.lanes_per_unit;
    const double cycles = std::max(4.0, 4.0 * lanes / of(scalar, op_upper));
    return cycles / c_.clock_ghz();
  }

  // ns for `values` ops of rate `per_clock_per_core` spread over the device.
  double throughput_ns(double values, double per_clock_per_core) const {
    return values / (per_clock_per_core * c_.core.shader_cores * c_.clock_ghz());
  }

 private:
  const SimConfig& c_;
};

// ------------------------------------------------------------ kernels

// Is tp_/lat_<op> in the program these parameters build (compute.cl's #if's)?
bool compiled_in(SimLaunch& l, const Elem& e, const std::string& op, bool throughput) {
  const KernelSpec& spec = l.spec();
  const bool mix = op.rfind("MIX_", 0) == 0;
  const bool fast = op == "ADD" || op == "MUL" || op == "FMA" || op == "MAD" || mix;
  const auto ops = spec.word("ops");
  const bool selected = ops == "ALL" || ops == op || (fast && ops == "FAST");
  if (!selected) return false;
  const bool fp32 = spec.scalar("scalar") == Scalar::f32;
  if (mix) return throughput && e.kind == Kind::Float && e.vec == 1 && fp32;
  if (!throughput && e.vec != 1) return false;  // lat_ kernels are scalar only
  if (is_slow(op) && e.vec != 1) return false;  // SLOW_KERNELS of vectors are empty
  if (e.kind == Kind::Float) {
    if (op == "CVT" || op == "DP4A") return false;
    if (op.rfind("NATIVE_", 0) == 0 && spec.scalar("scalar") == Scalar::f64) return false;
    return true;
  }
  if (op == "CVT") return e.vec == 1 && spec.scalar("scalar") == Scalar::i32;
  if (op == "DP4A") return false;  // needs NVIDIA inline PTX, which no sim device accepts
  return op == "ADD" || op == "MUL" || op == "MAD" || op == "DIV";
}

void fill_poison(SimBuffer& out, size_t bytes) {
  const std::vector<std::byte> ff(std::min<size_t>(bytes, out.size_bytes()), std::byte{0xff});
  out.write(0, ff);
}

// tp_<op>(seed, param, out, iters)
double run_tp(SimLaunch& l, const std::string& op) {
  const Elem e = elem_of(l);
  if (!compiled_in(l, e, op, true))
    throw DeviceError(fmt::format("sim: kernel tp_{} is not in the program these parameters build", op));
  const SimBuffer& seed = l.buffer(0);
  const SimBuffer& param = l.buffer(1);
  SimBuffer& out = l.buffer(2);
  const uint32_t iters = l.u32(3);
  const int chains = static_cast<int>(l.spec().integer("chains", 8));
  const bool mix = op.rfind("MIX_", 0) == 0;
  const int steps =
      static_cast<int>(is_slow(op) ? l.spec().integer("unroll_slow", 4) : l.spec().integer("unroll", 32));
  if (chains <= 0 || steps <= 0 || (mix && chains % 2 != 0))
    throw DeviceError("sim: compute with chains or unroll out of range");
  const size_t items = l.global().total();
  const size_t per_item_scalars = size_t{2} * chains * e.vec;
  const size_t item_bytes = per_item_scalars * e.bytes;
  if (items * item_bytes > seed.size_bytes() || items * item_bytes > out.size_bytes())
    throw DeviceError("sim: compute tp_ reads or writes past its buffers");

  // Time: every lane-op of the launch at the op's rate; the mixes at each
  // op's own rate, together when the description dual-issues fma and add.
  const Rates rates(l.config());
  const double values = static_cast<double>(items) * iters * steps * chains * 2 * e.vec;
  double ns = 0;
  if (op == "MIX_FMA_ADD") {
    const double t_fma = rates.throughput_ns(values / 2, rates.of("float", "FMA"));
    const double t_add = rates.throughput_ns(values / 2, rates.of("float", "ADD"));
    ns = l.config().rates.dual_issue_fma_add ? std::max(t_fma, t_add) : t_fma + t_add;
  } else if (op == "MIX_FMA_IADD") {
    ns = rates.throughput_ns(values / 2, rates.of("float", "FMA")) +
         rates.throughput_ns(values / 2, rates.of("int", "ADD"));
  } else {
    ns = rates.throughput_ns(values, rates.of(e.scalar, op));
  }

  // Semantics, per distinct seed block.
  const auto seeds = seed.load_all<std::byte>(items * item_bytes);
  std::map<std::string, std::vector<std::byte>> done;  // seed block -> out block
  std::vector<const std::vector<std::byte>*> result(items);
  for (size_t it = 0; it < items; ++it) {
    std::string key(reinterpret_cast<const char*>(seeds.data() + it * item_bytes), item_bytes);
    done.emplace(std::move(key), std::vector<std::byte>{});
  }
  const double distinct_ops = static_cast<double>(done.size()) * iters * steps * chains * 2 * e.vec;
  if (distinct_ops > computed_cap(op)) {
    fill_poison(out, items * item_bytes);
    return ns;
  }
  const Value a = load_value(e, param.load_all<std::byte>(e.bytes, 0).data());
  const Value b = load_value(e, param.load_all<std::byte>(e.bytes, e.bytes).data());
  const FloatMaps fm{e.bytes};
  const IntMaps im{e.bytes};
  for (auto& [key, res] : done) {
    res.assign(reinterpret_cast<const std::byte*>(key.data()),
               reinterpret_cast<const std::byte*>(key.data()) + key.size());
    std::byte* blk = res.data();
    if (op == "MIX_FMA_IADD") {
      // Per chain pair c: [x, y, p, q], p and q int32 bit patterns.
      const Elem i32{Kind::Int, "int", 4, 1};
      for (int c = 0; c < chains / 2; ++c) {
        double x = load_value(e, blk + (4 * c) * 4).f, y = load_value(e, blk + (4 * c + 1) * 4).f;
        int64_t p = load_value(i32, blk + (4 * c + 2) * 4).i, q = load_value(i32, blk + (4 * c + 3) * 4).i;
        const IntMaps m32{4};
        for (uint64_t s = 0; s < uint64_t{iters} * steps; ++s) {
          fm.step("FMA", false, x, y, a.f, b.f);
          m32.step("ADD", p, q, 0, 0);
        }
        store_value(e, {x, 0}, blk + (4 * c) * 4);
        store_value(e, {y, 0}, blk + (4 * c + 1) * 4);
        store_value(i32, {0, p}, blk + (4 * c + 2) * 4);
        store_value(i32, {0, q}, blk + (4 * c + 3) * 4);
      }
    } else {
      for (int c = 0; c < chains; ++c) {
        const std::string o = op == "MIX_FMA_ADD" ? (c % 2 == 0 ? "FMA" : "ADD") : op;
        // tp_FMA and tp_MAD of floats are INDEP_KERNELS (TP_STEP_*); the mix uses STEP_FMA.
        const bool independent = op == "FMA" || op == "MAD";
        for (int ln = 0; ln < e.vec; ++ln) {
          std::byte* px = blk + (size_t(2 * c) * e.vec + ln) * e.bytes;
          std::byte* py = blk + (size_t(2 * c + 1) * e.vec + ln) * e.bytes;
          Value x = load_value(e, px), y = load_value(e, py);
          for (uint64_t s = 0; s < uint64_t{iters} * steps; ++s) {
            if (e.kind == Kind::Float)
              fm.step(o, independent, x.f, y.f, a.f, b.f);
            else
              im.step(o, x.i, y.i, a.i, b.i);
          }
          store_value(e, x, px);
          store_value(e, y, py);
        }
      }
    }
  }
  for (size_t it = 0; it < items; ++it) {
    const std::string key(reinterpret_cast<const char*>(seeds.data() + it * item_bytes), item_bytes);
    out.write(it * item_bytes, done.at(key));
  }
  return ns;
}

// lat_<op>(seed, param, out, cycles, iters): one chain, one work-item.
double run_lat(SimLaunch& l, const std::string& op) {
  const Elem e = elem_of(l);
  if (!compiled_in(l, e, op, false))
    throw DeviceError(fmt::format("sim: kernel lat_{} is not in the program these parameters build", op));
  const SimBuffer& seed = l.buffer(0);
  const SimBuffer& param = l.buffer(1);
  SimBuffer& out = l.buffer(2);
  SimBuffer& cycles = l.buffer(3);
  const uint32_t iters = l.u32(4);
  const int steps =
      static_cast<int>(is_slow(op) ? l.spec().integer("lat_unroll_slow", 16) : l.spec().integer("lat_unroll", 64));
  if (steps <= 0) throw DeviceError("sim: compute with lat_unroll out of range");
  const Rates rates(l.config());
  const double ops = static_cast<double>(iters) * steps * 2;
  // Every work-item runs the chain (the OpenCL C has no guard): launched
  // wider, they would all store to out[0..1]; one is what the probe launches.
  const double ns = ops * rates.latency_ns(e.scalar, op);
  cycles.store<uint64_t>(0, 0);  // no cycle counter without inline PTX
  if (ops > computed_cap(op)) {
    fill_poison(out, 2 * e.bytes);
    return ns;
  }
  const Value a = load_value(e, param.load_all<std::byte>(e.bytes, 0).data());
  const Value b = load_value(e, param.load_all<std::byte>(e.bytes, e.bytes).data());
  auto x = load_value(e, seed.load_all<std::byte>(e.bytes, 0).data());
  auto y = load_value(e, seed.load_all<std::byte>(e.bytes, e.bytes).data());
  for (uint64_t s = 0; s < uint64_t{iters} * steps; ++s) {
    if (e.kind == Kind::Float)
      FloatMaps{e.bytes}.step(op, false, x.f, y.f, a.f, b.f);
    else
      IntMaps{e.bytes}.step(op, x.i, y.i, a.i, b.i);
  }
  std::vector<std::byte> res(2 * e.bytes);
  store_value(e, x, res.data());
  store_value(e, y, res.data() + e.bytes);
  out.write(0, res);
  return ns;
}

}  // namespace

double sim_op_rate(const SimConfig& c, const std::string& scalar, const std::string& op_upper) {
  return Rates(c).of(scalar, op_upper);
}

double sim_op_latency_ns(const SimConfig& c, const std::string& scalar, const std::string& op_upper) {
  return Rates(c).latency_ns(scalar, op_upper);
}

void register_sim_family_compute(FamilyTable& table) {
  auto add = [&](const std::string& op, bool lat) {
    table.add({"compute", "tp_" + op, 0, [op](SimLaunch& l) { return run_tp(l, op); }});
    if (lat) table.add({"compute", "lat_" + op, 1, [op](SimLaunch& l) { return run_lat(l, op); }});
  };
  for (const char* op : kFloatOps) add(op, true);
  for (const char* op : kIntOnlyOps) add(op, true);
  add("MIX_FMA_ADD", false);
  add("MIX_FMA_IADD", false);
}

}  // namespace gpuscope::sim
