// Probes `compute` (arithmetic throughput per type and op) and `oplatency`
// (dependent-chain latency per type and op), both on src/kernels/opencl/compute.cl,
// whose header says why its kernels have the shape they have.
//
// compute: for every (type, op) of the matrix, CHAINS independent chains per
// work-item over enough work-items to fill every compute unit several times
// over (2048 per CU on GPUs: a full NVIDIA SM), timed by the harness; the
// series "compute.<type>.<op>" has one point per vector form (x = values per
// operation: 1 scalar, 2 packed half2, 4 float4), y = Gop/s (an FMA is one
// op; analysis doubles it for FLOP/s). Two mixes test dual issue.
// oplatency: one work-item, one chain; "oplatency.<type>.<op>", x = 1, y = ns
// per op, and on NVIDIA the SM's own cycle counter read around the chain.
//
// Before timing, each (form, op) runs once with one loop trip and the host
// checks every lane of the first work-items (and the last one) against its
// own evaluation of the same maps: the binary that is timed has been shown to
// compute them (the trip count is a kernel argument, so the compiler cannot
// specialise the timed launches).
#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

namespace gpuscope {
namespace {

enum class Kind { Float, Int, PtxF16x2 };

// One compiled program: a type in one vector form.
struct Form {
  std::string type;  // finding type name: fp64 fp32 fp16 int64 int32 int16 int8
  Scalar scalar = Scalar::f32;  // the buffers' element type (u32 for PTX f16x2)
  Kind kind = Kind::Float;
  int vec = 1;     // lanes of the chain's vector type (float4: 4)
  int packed = 1;  // values per scalar (PTX f16x2: two halves in a uint)
  size_t scalar_bytes = 4;
  std::string path;  // how the type is reached, for the notes
  int lanes() const { return vec * packed; }
  // The chain's type as C spells it ("float4", "uint"), for the notes.
  std::string elem() const {
    static const std::map<Scalar, const char*> c_names = {
        {Scalar::i8, "char"},  {Scalar::i16, "short"}, {Scalar::i32, "int"},   {Scalar::i64, "long"},
        {Scalar::u32, "uint"}, {Scalar::u64, "ulong"}, {Scalar::f16, "half"},  {Scalar::f32, "float"},
        {Scalar::f64, "double"}};
    const std::string name = c_names.at(scalar);
    return vec == 1 ? name : name + std::to_string(vec);
  }
  std::string key() const { return fmt::format("{}x{}", type, lanes()); }
};

// What a kernel counts as one op, for the notes: where a map needs a cheap
// helper op beside the one measured, it is said here.
struct OpDef {
  const char* name;
  double flop_per_op;  // 2 for fused multiply-adds; 1 otherwise
  const char* counted;
};

// Ops compute.cl unrolls less (its SLOW_KERNELS): the same list.
bool is_slow(const std::string& op) {
  for (const char* s : {"div", "sqrt", "rsqrt", "exp", "log", "sin"})
    if (op == s || op == std::string("native_") + s) return true;
  return op == "native_divide";
}

const OpDef kOps[] = {
    {"add", 1, "one add (floats: x+y then y-x, a rotation; integers: Fibonacci pairs)"},
    {"mul", 1, "one multiply"},
    {"fma", 2, "one fma(v, a, b)"},
    {"mad", 2, "one mad(v, a, b) (integers: v*a+b)"},
    {"div", 1, "one division a/v (integers: a/(v|1), an OR beside each division)"},
    {"sqrt", 1, "one sqrt"},
    {"rsqrt", 1, "one rsqrt"},
    {"exp", 1, "one exp(-v) (negation is a free source modifier)"},
    {"log", 1, "one log(v*a): a multiply beside each log"},
    {"sin", 1, "one sin"},
    {"native_divide", 1, "one native_divide(a, v)"},
    {"native_sqrt", 1, "one native_sqrt"},
    {"native_rsqrt", 1, "one native_rsqrt"},
    {"native_exp", 1, "one native_exp(-v)"},
    {"native_log", 1, "one native_log(v*a): a multiply beside each log"},
    {"native_sin", 1, "one native_sin"},
    {"cvt", 1,
     "one conversion: int32->fp32 and fp32->int32 alternate, with a multiply by 1.0f (unknown to the "
     "compiler) beside each pair"},
    {"dp4a", 8, "one dp4a (PTX dp4a.s32.s32: 4 int8 products summed into an int32 = 8 int8 ops)"},
    {"mix_fma_add", 1, "fp32 fma and fp32 add chains interleaved half and half; ops of both kinds counted"},
    {"mix_fma_iadd", 1, "fp32 fma and int32 add chains interleaved half and half; ops of both kinds counted"},
};

const OpDef& op_def(const std::string& name) {
  for (const auto& o : kOps)
    if (name == o.name) return o;
  throw std::logic_error("compute: unknown op " + name);
}

// Kernel names carry the op in upper case (compute.cl says why).
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// ------------------------------------------------------------ half floats
// IEEE binary16 on the host, for seeds and for reading results back.
// Round to nearest even; the probe's values are normal numbers in [2^-14, 65504].
uint16_t half_bits(double v) {
  const auto f = static_cast<float>(v);
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffffu;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // underflow to zero (never the probe's values)
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
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

// ------------------------------------------------------------ lane values
// A lane's value on the host: floats as double, integers as int64 (wrapped
// to the type's width after every op, as the device's arithmetic does).
struct Lanes {
  std::vector<double> f;
  std::vector<int64_t> i;
};

int64_t wrap(uint64_t v, size_t bytes) {
  if (bytes == 8) return static_cast<int64_t>(v);
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  const uint64_t m = (uint64_t{1} << bits) - 1;
  v &= m;
  if (v >> (bits - 1)) v |= ~m;  // sign-extend
  return static_cast<int64_t>(v);
}

// Encodes lanes into the scalar buffer layout of `form` and back.
std::vector<std::byte> encode(const Form& form, const Lanes& l) {
  const size_t n = form.kind == Kind::Int ? l.i.size() : l.f.size();
  std::vector<std::byte> out(n / form.packed * form.scalar_bytes);
  for (size_t k = 0; k < n; ++k) {
    std::byte* dst = out.data() + (k / form.packed) * form.scalar_bytes;
    if (form.kind == Kind::Int) {
      const auto v = static_cast<uint64_t>(l.i[k]);
      std::memcpy(dst, &v, form.scalar_bytes);  // little-endian hosts and devices
    } else if (form.kind == Kind::PtxF16x2 || form.scalar == Scalar::f16) {
      const uint16_t h = half_bits(l.f[k]);
      std::memcpy(dst + (k % form.packed) * 2, &h, 2);
    } else if (form.scalar == Scalar::f32) {
      const auto v = static_cast<float>(l.f[k]);
      std::memcpy(dst, &v, 4);
    } else {
      std::memcpy(dst, &l.f[k], 8);
    }
  }
  return out;
}

Lanes decode(const Form& form, std::span<const std::byte> bytes) {
  Lanes l;
  const size_t n = bytes.size() / form.scalar_bytes * form.packed;
  for (size_t k = 0; k < n; ++k) {
    const std::byte* src = bytes.data() + (k / form.packed) * form.scalar_bytes;
    if (form.kind == Kind::Int) {
      uint64_t v = 0;
      std::memcpy(&v, src, form.scalar_bytes);
      l.i.push_back(wrap(v, form.scalar_bytes));
    } else if (form.kind == Kind::PtxF16x2 || form.scalar == Scalar::f16) {
      uint16_t h = 0;
      std::memcpy(&h, src + (k % form.packed) * 2, 2);
      l.f.push_back(half_value(h));
    } else if (form.scalar == Scalar::f32) {
      float v = 0;
      std::memcpy(&v, src, 4);
      l.f.push_back(v);
    } else {
      double v = 0;
      std::memcpy(&v, src, 8);
      l.f.push_back(v);
    }
  }
  return l;
}

// The device's rounding of a host value (its seeds and params are rounded
// once on upload; the host's reference starts from the rounded values).
double device_round(const Form& form, double v) {
  if (form.kind == Kind::PtxF16x2 || form.scalar == Scalar::f16) return half_value(half_bits(v));
  if (form.scalar == Scalar::f32) return static_cast<float>(v);
  return v;
}

// ------------------------------------------------------------ host reference
// The kernel's maps evaluated on the host: floats in double (compared with a
// tolerance), integers exactly.
double float_map(const std::string& op, double v, double p) {
  if (op == "fma" || op == "mad") return 0;  // handled by the caller (two params)
  if (op == "div" || op == "native_divide") return p / v;
  if (op == "sqrt" || op == "native_sqrt") return std::sqrt(v);
  if (op == "rsqrt" || op == "native_rsqrt") return 1 / std::sqrt(v);
  if (op == "exp" || op == "native_exp") return std::exp(-v);
  if (op == "log" || op == "native_log") return std::log(v * p);
  if (op == "sin" || op == "native_sin") return std::sin(v);
  throw std::logic_error("compute: no host map for " + op);
}

void float_step(const std::string& op, double& x, double& y, double a, double b) {
  if (op == "add") {
    x = x + y;
    y = y - x;
  } else if (op == "mul") {
    x = y * a;
    y = x * b;
  } else if (op == "fma" || op == "mad") {
    x = y * a + b;
    y = x * a + b;
  } else if (op == "independent_fma") {
    x = x * a + b;
    y = y * a + b;
  } else if (op == "div" || op == "native_divide") {
    x = a / y;
    y = b / x;
  } else {
    x = float_map(op, y, a);
    y = float_map(op, x, a);
  }
}

void int_step(const std::string& op, int64_t& x, int64_t& y, int64_t a, int64_t b, size_t bytes) {
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  if (op == "add") {
    x = wrap(u(x) + u(y), bytes);
    y = wrap(u(y) + u(x), bytes);
  } else if (op == "mul") {
    x = wrap(u(x) * u(y), bytes);
    y = wrap(u(y) * u(x), bytes);
  } else if (op == "mad") {
    x = wrap(u(y) * u(a) + u(b), bytes);
    y = wrap(u(x) * u(a) + u(b), bytes);
  } else if (op == "div") {
    x = wrap(u(a / (y | 1)), bytes);
    y = wrap(u(a / (x | 1)), bytes);
  } else if (op == "cvt") {
    const float one = std::bit_cast<float>(static_cast<uint32_t>(a));
    x = static_cast<int32_t>(static_cast<float>(static_cast<int32_t>(y)) * one);
    y = static_cast<int32_t>(static_cast<float>(static_cast<int32_t>(x)) * one);
  } else if (op == "dp4a") {
    const auto dot = [&](int64_t p) {
      int64_t s = static_cast<int32_t>(b);
      for (int k = 0; k < 4; ++k)
        s += static_cast<int8_t>((u(p) >> (8 * k)) & 0xff) * static_cast<int8_t>((u(a) >> (8 * k)) & 0xff);
      return wrap(u(s), 4);
    };
    x = dot(y);
    y = dot(x);
  } else {
    throw std::logic_error("compute: no host map for integer " + op);
  }
}

// Per-op parameters and seeds: chosen so the maps stay bounded and every
// value stays normal (see compute.cl).
struct Params {
  double fa = 0, fb = 0;
  int64_t ia = 0, ib = 0;
};

Params params_for(const Form& form, const std::string& op) {
  Params p;
  if (op == "mul") {
    p.fa = 1 + std::ldexp(1, -10);
    p.fb = 1 - std::ldexp(1, -10);
  } else if (op == "fma" || op == "mad" || op == "mix_fma_add" || op == "mix_fma_iadd") {
    p.fa = 0.75;
    p.fb = 0.25;
  } else if (op == "div" || op == "native_divide") {
    p.fa = 1.5;
    p.fb = 1.5 * (1 + std::ldexp(1, -20));
  } else if (op == "log" || op == "native_log") {
    p.fa = 10;
  }
  if (form.kind == Kind::Int) {
    const int bits = static_cast<int>(form.scalar_bytes * 8);
    if (op == "mad") {
      p.ia = 0x2f3b5c6d1e2f4a5bLL | 1;
      p.ib = 0x1234567876543211LL;
    } else if (op == "div") {
      p.ia = (int64_t{1} << (bits - 2)) + 12345 % (int64_t{1} << (bits - 3));
    } else if (op == "cvt") {
      p.ia = std::bit_cast<uint32_t>(1.0f);
    } else if (op == "dp4a") {
      p.ia = static_cast<int32_t>(0x7f03fd05u);  // bytes 5, -3, 3, 127
      p.ib = 17;
    }
    p.ia = wrap(static_cast<uint64_t>(p.ia), form.scalar_bytes);
    p.ib = wrap(static_cast<uint64_t>(p.ib), form.scalar_bytes);
  }
  return p;
}

// Seeds for `items` work-items: 2 * chains values (x, y) per chain, `lanes` each.
Lanes make_seeds(const Form& form, const std::string& op, size_t values, uint64_t seed) {
  Lanes l;
  SplitMix64 rng(seed);
  for (size_t k = 0; k < values; ++k) {
    const uint64_t r = rng.next();
    if (form.kind == Kind::Int) {
      int64_t v = wrap(r, form.scalar_bytes);
      if (op == "mul") v |= 1;                            // odd: products never reach 0
      if (op == "cvt") v = static_cast<int32_t>(r) >> 2;  // |v| < 2^29: a float converts back in range
      if (op == "mix_fma_iadd") v = static_cast<int32_t>(r);
      l.i.push_back(v);
    } else {
      // [0.5, 2): positive (sqrt, log), O(1) (no overflow anywhere).
      l.f.push_back(device_round(form, 0.5 + 1.5 * static_cast<double>(r >> 11) * std::ldexp(1, -53)));
    }
  }
  return l;
}

// Relative tolerance of a float lane after a validation trip: the maps are
// contractions or neutral, so error stays a few ulp per op at most.
double tolerance(const Form& form) {
  if (form.kind == Kind::PtxF16x2 || form.scalar == Scalar::f16) return 4e-2;
  if (form.scalar == Scalar::f32) return 2e-3;
  return 1e-9;
}

// ------------------------------------------------------------ the probes

struct Plan {
  int chains = 8;
  int unroll = 32;
  int unroll_slow = 4;
  int lat_unroll = 64;
  int lat_unroll_slow = 16;
  size_t global = 0;
  size_t local = 0;
  size_t pattern_items = 512;  // seeds repeat every this many work-items
  int steps(const std::string& op) const { return is_slow(op) ? unroll_slow : unroll; }
  int lat_steps(const std::string& op) const { return is_slow(op) ? lat_unroll_slow : lat_unroll; }
};

// --compute-plan overrides (ProbeOptions::compute_plan), to find out why a
// rate falls short (instruction-level parallelism, occupancy, loop
// overhead) without rebuilding; run_options checked keys and ranges.
void apply_plan_override(Plan& plan, size_t cus, const std::map<std::string, int64_t>& override) {
  for (const auto& [k, v] : override) {
    if (k == "chains") plan.chains = static_cast<int>(v);
    if (k == "unroll") plan.unroll = static_cast<int>(v);
    if (k == "unroll_slow") plan.unroll_slow = static_cast<int>(v);
    if (k == "items_per_cu") plan.global = cus * static_cast<size_t>(v);
    if (k == "local") plan.local = static_cast<size_t>(v);
  }
  plan.global = std::max(plan.local, plan.global / plan.local * plan.local);
}

class ComputeRunner {
 public:
  ComputeRunner(ProbeContext& ctx, std::string probe)
      : ctx_(ctx), dev_(ctx.device), info_(dev_.info()), probe_(std::move(probe)), budget_(ctx.budget_s) {
    const bool cpu = info_.type == "cpu";
    const bool quick = ctx.options.quick;
    // CPUs compile these unrolled bodies slowly (PoCL, two cores in CI) and
    // need no occupancy: smaller bodies there.
    plan_.chains = cpu ? 4 : 8;
    plan_.unroll = cpu ? (quick ? 4 : 8) : 32;
    plan_.lat_unroll = cpu ? 16 : 64;
    const size_t cus = std::max<uint32_t>(info_.compute_units, 1);
    plan_.unroll_slow = cpu ? 2 : 4;
    plan_.lat_unroll_slow = cpu ? 4 : 16;
    plan_.local = cpu ? 16 : 256;
    plan_.global = cpu ? cus * 64 : cus * 2048;
    apply_plan_override(plan_, cus, ctx.options.compute_plan);
    plan_.pattern_items = std::min<size_t>(plan_.global, 512);
    harness_ = ctx.options.harness;
    // Launches of 5 ms swamp launch overhead (~10 us) as well as 10 ms do,
    // and halve the probe's time.
    harness_.target_launch_ms = std::min(harness_.target_launch_ms, 5.0);
    // compute.cl's inline assembly is NVIDIA PTX; its instructions need
    // these ISA versions: packed half arithmetic 5.3, dp4a 6.1.
    ptx_ = info_.features.inline_asm == "nvidia-ptx";
    isa_ = info_.features.isa_version;
  }

  // The form of `type` with `lanes` values per op, or the reason there is none.
  std::variant<Form, std::string> form(const std::string& type, int lanes) const {
    Form f;
    f.type = type;
    f.vec = lanes;
    if (type == "fp32") {
      f.scalar = Scalar::f32;
    } else if (type == "fp64") {
      if (!info_.features.fp64) return std::string("the device has no double precision");
      f.scalar = Scalar::f64;
    } else if (type == "fp16") {
      if (info_.features.fp16) {
        f.scalar = Scalar::f16;
        f.path = "half arithmetic in kernels";
      } else if (ptx_ && isa_ >= 5.3) {
        if (lanes != 2) return std::string("the PTX path is packed half2 only");
        f.kind = Kind::PtxF16x2, f.scalar = Scalar::u32, f.vec = 1, f.packed = 2;
        f.path = "NVIDIA inline PTX (add/sub/mul/fma.rn.f16x2): the driver offers no half arithmetic";
      } else {
        return std::string("no half arithmetic and no vendor inline-assembly path for it");
      }
    } else {
      f.kind = Kind::Int;
      const std::map<std::string, Scalar> ints = {
          {"int64", Scalar::i64}, {"int32", Scalar::i32}, {"int16", Scalar::i16}, {"int8", Scalar::i8}};
      f.scalar = ints.at(type);
    }
    f.scalar_bytes = scalar_bytes(f.scalar);
    if (f.path.empty()) f.path = "the API's kernel language";
    return f;
  }

  // `kernel` is "tp_<OP>" or "lat_<OP>"; the program holds that op only, or
  // all the fast ops of the form (compute.cl says why).
  KernelSpec spec(const Form& f, const std::string& kernel) const {
    const std::string op = kernel.substr(kernel.find('_') + 1);
    const bool fast = op == "ADD" || op == "MUL" || op == "FMA" || op == "MAD" || op.rfind("MIX_", 0) == 0;
    const char* kind = f.kind == Kind::Float ? "FLOAT" : f.kind == Kind::Int ? "INT" : "PTX_F16X2";
    return {"compute",
            kernel,
            {{"ops", fast ? std::string("FAST") : op},
             {"scalar", f.scalar},
             {"vec", f.vec},
             {"kind", kind},
             {"has_ptx", ptx_ && ptx_ok_},
             {"chains", plan_.chains},
             {"unroll", plan_.unroll},
             {"lat_unroll", plan_.lat_unroll},
             {"unroll_slow", plan_.unroll_slow},
             {"lat_unroll_slow", plan_.lat_unroll_slow}}};
  }

  // Why `op` cannot run on this device, or "" when it can.
  std::string op_unsupported(const std::string& op) const {
    if (op != "dp4a") return "";
    if (ptx_ && ptx_ok_ && isa_ >= 6.1) return "";
    return info_.features.integer_dot_product
               ? "the device offers the API's integer dot product, for which gpuscope has no kernel yet"
               : "no int8 dot-product instruction reachable: needs NVIDIA inline PTX (dp4a, sm_61+) or "
                 "cl_khr_integer_dot_product";
  }

  // Builds a kernel of `f`. Where the driver rejects inline PTX in a float or
  // integer program, builds again without it (no cycle counter, no dp4a) and
  // says so; any failure to build or to find the kernel is returned as text.
  std::variant<Kernel*, std::string> build(const Form& f, const std::string& kernel) {
    try {
      try {
        return &dev_.kernel(spec(f, kernel));
      } catch (const BuildError& e) {
        if (!ptx_ || !ptx_ok_ || f.kind == Kind::PtxF16x2) throw;
        ptx_ok_ = false;
        ptx_note_ =
            "inline PTX rejected by the driver (" + first_line(e.log) + "): no cycle counter, no dp4a";
        ctx_.progress(probe_ + ": " + ptx_note_);
        return &dev_.kernel(spec(f, kernel));
      }
    } catch (const BuildError& e) {
      return fmt::format("{} ({} path) did not build: {}", f.key(), f.path, first_line(e.log));
    } catch (const DeviceError& e) {
      return fmt::format("{} ({} path): {}", f.key(), f.path, e.what());
    }
  }

  // Runs the clock up before timing: GPUs start a burst at a low clock and
  // raise it over tens to hundreds of ms.
  void warm_clock(double seconds) {
    auto f = std::get<Form>(form("fp32", 1));
    auto built = build(f, "tp_FMA");
    if (!std::holds_alternative<Kernel*>(built)) return;  // the matrix will say why
    Kernel& k = *std::get<Kernel*>(built);
    auto bufs = buffers(f, "fma", plan_.global);
    const TimeBudget t(seconds);
    uint32_t iters = 1;
    while (!t.exhausted()) {
      const double ns = launch_tp(k, bufs, iters);
      if (ns < 20e6) iters *= 2;
    }
  }

  struct Buffers {
    std::unique_ptr<Buffer> seed, param, out, cycles;
    Lanes seeds;
    Params params;
    // Float fma and mad tp_ kernels also take a and b by value (float, or
    // double for fp64): compute.cl's THROUGHPUT_KERNEL_BYVAL says why.
    bool by_value = false;
    KernelArg pa = 0.0f, pb = 0.0f;
  };

  Buffers buffers(const Form& f, const std::string& op, size_t items) {
    Buffers b;
    // Seeds for pattern_items work-items, repeated over the rest: the
    // compiler cannot see any of them either way, and the host's set-up
    // stays small next to a 5 ms launch.
    const size_t pattern = std::min(items, plan_.pattern_items);
    const size_t values = pattern * 2 * plan_.chains * f.lanes();
    b.seeds = make_seeds(f, op, values, 0x5eed ^ std::hash<std::string>{}(f.key() + op));
    b.params = params_for(f, op);
    const auto pattern_bytes = encode(f, b.seeds);
    std::vector<std::byte> seed_bytes(pattern_bytes.size() / pattern * items);
    for (size_t off = 0; off < seed_bytes.size(); off += pattern_bytes.size())
      std::memcpy(seed_bytes.data() + off, pattern_bytes.data(),
                  std::min(pattern_bytes.size(), seed_bytes.size() - off));
    b.seed = dev_.create_buffer(seed_bytes.size());
    b.out = dev_.create_buffer(seed_bytes.size());
    dev_.write(*b.seed, 0, std::span<const std::byte>(seed_bytes));
    Lanes p;
    p.f = {device_round(f, b.params.fa), device_round(f, b.params.fb)};
    p.i = {b.params.ia, b.params.ib};
    // Params are scalars: one value each even for packed halves (the kernel
    // reads param[0] as a whole uint: both halves).
    std::vector<std::byte> pb;
    if (f.kind == Kind::PtxF16x2) {
      Lanes q;
      q.f = {p.f[0], p.f[0], p.f[1], p.f[1]};
      pb = encode(f, q);
    } else {
      pb = encode(f, p);
    }
    b.param = dev_.create_buffer(pb.size());
    dev_.write(*b.param, 0, pb);
    b.cycles = dev_.create_buffer(sizeof(uint64_t));
    b.by_value = f.kind == Kind::Float && (op == "fma" || op == "mad");
    if (f.scalar == Scalar::f64)
      b.pa = p.f[0], b.pb = p.f[1];
    else  // float, or half: p.f holds values exact in half, so exact in float
      b.pa = static_cast<float>(p.f[0]), b.pb = static_cast<float>(p.f[1]);
    return b;
  }

  double launch_tp(Kernel& k, Buffers& b, uint32_t iters) {
    const KernelArg args[] = {b.seed.get(), b.param.get(), b.out.get(), iters, b.pa, b.pb};
    return dev_.launch(k, Range::d1(plan_.global), Range::d1(std::min(plan_.local, k.max_work_group_size())),
                       std::span<const KernelArg>(args, b.by_value ? 6 : 4));
  }

  double launch_lat(Kernel& k, Buffers& b, uint32_t iters) {
    const KernelArg args[] = {b.seed.get(), b.param.get(), b.out.get(), b.cycles.get(), iters};
    return dev_.launch(k, Range::d1(1), Range::d1(1), args);
  }

  // Host evaluation of work-item `item`'s lanes after `steps` steps of every chain.
  // `throughput`: the tp_ kernels' maps (float fma and mad run x and y as
  // independent chains there; compute.cl's TP_STEP_FMA says why).
  Lanes reference(const Form& f, const std::string& op, const Buffers& b, size_t item, size_t steps,
                  bool throughput) const {
    const size_t per_item = 2 * plan_.chains * f.lanes();
    item %= plan_.pattern_items;
    Lanes r;
    const double a = device_round(f, b.params.fa), bb = device_round(f, b.params.fb);
    const size_t lanes = static_cast<size_t>(f.lanes());
    if (f.kind == Kind::Int)
      r.i.assign(b.seeds.i.begin() + item * per_item, b.seeds.i.begin() + (item + 1) * per_item);
    else
      r.f.assign(b.seeds.f.begin() + item * per_item, b.seeds.f.begin() + (item + 1) * per_item);
    for (int c = 0; c < plan_.chains; ++c) {
      for (size_t l = 0; l < lanes; ++l) {
        const size_t xi = (2 * c) * lanes + l, yi = (2 * c + 1) * lanes + l;
        if (op == "mix_fma_iadd") {
          // Layout of that kernel: per chain pair c/2, [x, y, p, q] (fp32 and int32 bits).
          continue;
        }
        std::string o = op;
        if (op == "mix_fma_add") o = c % 2 == 0 ? "fma" : "add";
        if (throughput && f.kind == Kind::Float && (op == "fma" || op == "mad")) o = "independent_fma";
        for (size_t s = 0; s < steps; ++s) {
          if (f.kind == Kind::Int)
            int_step(o, r.i[xi], r.i[yi], b.params.ia, b.params.ib, f.scalar_bytes);
          else
            float_step(o, r.f[xi], r.f[yi], a, bb);
        }
      }
    }
    if (op == "mix_fma_iadd") {
      for (int c = 0; c < plan_.chains / 2; ++c) {
        double& x = r.f[4 * c];
        double& y = r.f[4 * c + 1];
        auto p = static_cast<int64_t>(std::bit_cast<int32_t>(static_cast<float>(r.f[4 * c + 2])));
        auto q = static_cast<int64_t>(std::bit_cast<int32_t>(static_cast<float>(r.f[4 * c + 3])));
        for (size_t s = 0; s < steps; ++s) {
          float_step("fma", x, y, a, bb);
          int_step("add", p, q, 0, 0, 4);
        }
        r.f[4 * c + 2] = std::bit_cast<float>(static_cast<int32_t>(p));
        r.f[4 * c + 3] = std::bit_cast<float>(static_cast<int32_t>(q));
      }
    }
    return r;
  }

  void check(const Form& f, const std::string& op, const Lanes& got, const Lanes& want,
             const std::string& what) const {
    const size_t n = f.kind == Kind::Int ? want.i.size() : want.f.size();
    for (size_t k = 0; k < n; ++k) {
      bool ok = true;
      std::string detail;
      const bool int_bits = op == "mix_fma_iadd" && k % 4 >= 2;
      if (f.kind == Kind::Int) {
        ok = got.i[k] == want.i[k];
        detail = fmt::format("{} vs {}", got.i[k], want.i[k]);
      } else if (int_bits) {
        ok = std::bit_cast<uint32_t>(static_cast<float>(got.f[k])) ==
             std::bit_cast<uint32_t>(static_cast<float>(want.f[k]));
        detail = "int32 bit patterns differ";
      } else {
        const double g = got.f[k], w = want.f[k];
        ok = std::isfinite(g) && std::abs(g - w) <= tolerance(f) * std::max(1.0, std::abs(w));
        detail = fmt::format("{} vs {}", g, w);
      }
      if (!ok)
        throw ValidationError(fmt::format("{}: {} {} lane {} of {}: device {} (host reference)", probe_,
                                          f.key(), op, k, what, detail));
    }
  }

  // Checks one trip of tp_<op> on the first work-item and the last.
  void validate_tp(const Form& f, const std::string& op, Kernel& k, Buffers& b) {
    launch_tp(k, b, 1);
    const size_t per_item = 2 * plan_.chains * f.lanes();
    const size_t item_bytes = per_item / f.packed * f.scalar_bytes;
    std::vector<std::byte> got(item_bytes);
    for (size_t item : {size_t{0}, plan_.global - 1}) {
      dev_.read(*b.out, item * item_bytes, got);
      check(f, op, decode(f, got), reference(f, op, b, item, plan_.steps(op), true),
            fmt::format("work-item {}", item));
    }
  }

  void validate_lat(const Form& f, const std::string& op, Kernel& k, Buffers& b) {
    launch_lat(k, b, 1);
    const size_t lanes2 = 2 * f.lanes();
    std::vector<std::byte> got(lanes2 / f.packed * f.scalar_bytes);
    dev_.read(*b.out, 0, got);
    // The latency kernel runs chain 0 of work-item 0 only.
    Lanes want = reference(f, op, b, 0, plan_.lat_steps(op), false);
    if (f.kind == Kind::Int)
      want.i.resize(lanes2);
    else
      want.f.resize(lanes2);
    check(f, op, decode(f, got), want, "the latency chain");
  }

  static Series new_series(const std::string& id, const std::string& probe, Axis x, Axis y) {
    Series s;
    s.id = id, s.probe = probe, s.x = std::move(x), s.y = std::move(y);
    return s;
  }

  // compute: one point per form of (type, op).
  void throughput(const std::string& type, const std::string& op, const std::vector<int>& lane_counts,
                  std::vector<Series>& out) {
    // dp4a runs in the int32 program but its operands are int8: its findings are int8's.
    const std::string id = fmt::format("compute.{}.{}", op == "dp4a" ? "int8" : type, op);
    for (int lanes : lane_counts) {
      if (budget_.exhausted()) {
        not_measured_.push_back(fmt::format("{} x{}", id, lanes));
        continue;
      }
      auto fv = form(type, lanes);
      if (auto* reason = std::get_if<std::string>(&fv)) {
        unsupported(id, lanes, *reason);
        continue;
      }
      const Form& f = std::get<Form>(fv);
      if (const std::string why = op_unsupported(op); !why.empty()) {
        unsupported(id, lanes, why);
        continue;
      }
      const std::string kname = "tp_" + upper(op);
      auto built = build(f, kname);
      if (auto* reason = std::get_if<std::string>(&built)) {
        unsupported(id, lanes, *reason);
        continue;
      }
      Kernel* k = std::get<Kernel*>(built);
      Buffers b = buffers(f, op, plan_.global);
      validate_tp(f, op, *k, b);
      const double ops_per_iter =
          static_cast<double>(plan_.global) * plan_.steps(op) * plan_.chains * 2 * f.lanes();
      const Measurement m =
          measure([&](uint64_t iters) { return launch_tp(*k, b, static_cast<uint32_t>(iters)); }, 1,
                  loop_trip_cap(info_.features, UINT32_MAX, 8), harness_);
      Point p;
      p.x = f.lanes();
      for (double ns_per_iter : m.ns_per_unit) p.samples.push_back(ops_per_iter / ns_per_iter);  // Gop/s
      p.y = median(p.samples);
      Series& s = series_for(out, id, "compute", {"values_per_op", ""}, {"throughput", "Gop/s"});
      insert_point(s, p);
      const OpDef& d = op_def(op);
      s.meta["type"] = op == "dp4a" ? "int8" : type;
      s.meta["op"] = op;
      s.meta["flop_per_op"] = d.flop_per_op;
      s.meta["counted"] = d.counted;
      s.meta["kernel"] = "compute/" + kname;
      s.meta["forms"].push_back({{"values_per_op", f.lanes()},
                                 {"elem", f.elem()},
                                 {"path", f.path},
                                 {"chains_per_work_item", plan_.chains},
                                 {"steps_per_trip", plan_.steps(op)},
                                 {"global", plan_.global},
                                 {"local", std::min(plan_.local, k->max_work_group_size())},
                                 {"trips_per_launch", m.work_per_launch},
                                 {"launch_ms", m.launch_ms},
                                 {"outliers", m.summary.outliers}});
      ctx_.progress(fmt::format("compute {:<6} {:<14} x{:<2} {:10.1f} Gop/s  (spread {:.1f}%)", type, op,
                                f.lanes(), p.y, 100 * m.summary.rel_spread));
    }
  }

  // oplatency: one work-item, one chain.
  void latency(const std::string& type, const std::string& op, std::vector<Series>& out) {
    const std::string id = fmt::format("oplatency.{}.{}", op == "dp4a" ? "int8" : type, op);
    if (budget_.exhausted()) {
      not_measured_.push_back(id);
      return;
    }
    auto fv = form(type, type == "fp16" && !info_.features.fp16 ? 2 : 1);
    if (auto* reason = std::get_if<std::string>(&fv)) {
      unsupported(id, 1, *reason);
      return;
    }
    const Form& f = std::get<Form>(fv);
    if (const std::string why = op_unsupported(op); !why.empty()) {
      unsupported(id, 1, why);
      return;
    }
    auto built = build(f, "lat_" + upper(op));
    if (auto* reason = std::get_if<std::string>(&built)) {
      unsupported(id, 1, *reason);
      return;
    }
    Kernel* k = std::get<Kernel*>(built);
    Buffers b = buffers(f, op, 1);
    validate_lat(f, op, *k, b);
    const double ops_per_iter = plan_.lat_steps(op) * 2.0;
    std::vector<std::pair<uint64_t, uint64_t>> cycles;  // (trips, cycles) of every launch
    const Measurement m = measure(
        [&](uint64_t iters) {
          const double ns = launch_lat(*k, b, static_cast<uint32_t>(iters));
          if (ptx_ && ptx_ok_) cycles.emplace_back(iters, dev_.read_values<uint64_t>(*b.cycles, 1)[0]);
          return ns;
        },
        1, loop_trip_cap(info_.features, UINT32_MAX, 8), harness_);
    Series s = new_series(id, "oplatency", {"chains", ""}, {"latency", "ns"});
    Point p;
    p.x = 1;
    for (double ns_per_iter : m.ns_per_unit) p.samples.push_back(ns_per_iter / ops_per_iter);
    p.y = median(p.samples);
    s.points.push_back(p);
    const OpDef& d = op_def(op);
    s.meta = {{"type", op == "dp4a" ? "int8" : type},
              {"op", op},
              {"counted", d.counted},
              {"path", f.path},
              {"kernel", "compute/lat_" + upper(op)},
              {"ops_per_trip", ops_per_iter},
              {"trips_per_launch", m.work_per_launch},
              {"launch_ms", m.launch_ms},
              {"clock_mhz_reported", info_.clock_mhz}};
    if (ptx_ && ptx_ok_ && !cycles.empty()) {
      // The timed launches are the last ones; their counters give cycles per
      // op on the SM's own clock (no assumption about the clock).
      std::vector<double> cyc;
      for (size_t i = cycles.size() - m.ns_per_unit.size(); i < cycles.size(); ++i)
        cyc.push_back(static_cast<double>(cycles[i].second) /
                      (static_cast<double>(cycles[i].first) * ops_per_iter));
      s.meta["cycles_per_op"] = cyc;
      s.meta["cycle_counter"] = "PTX %clock64 read before and after the chain";
    }
    ctx_.progress(fmt::format("oplatency {:<6} {:<14} {:8.3f} ns", type, op, p.y));
    out.push_back(std::move(s));
  }

  Series summary_series(const std::string& id, const std::string& probe) {
    Series s = new_series(id, probe, {"none", ""}, {"none", ""});
    s.meta = {{"unsupported", unsupported_},
              {"inline_ptx", ptx_ ? (ptx_ok_ ? "accepted" : ptx_note_) : "the device takes no NVIDIA PTX"},
              {"not_measured_time_budget", not_measured_},
              {"wall_s", budget_.elapsed_s()},
              {"budget_s", budget_.total_s()},
              {"plan",
               {{"chains", plan_.chains},
                {"unroll", plan_.unroll},
                {"unroll_slow", plan_.unroll_slow},
                {"lat_unroll", plan_.lat_unroll},
                {"lat_unroll_slow", plan_.lat_unroll_slow},
                {"global", plan_.global},
                {"local", plan_.local}}}};
    return s;
  }

  const Plan& plan() const { return plan_; }
  const DeviceInfo& info() const { return info_; }
  TimeBudget& budget() { return budget_; }

 private:
  static std::string first_line(const std::string& log) {
    for (size_t pos = 0; pos < log.size();) {
      const size_t end = log.find('\n', pos);
      std::string line = log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (line.find("error") != std::string::npos) return line.substr(0, 300);
      if (end == std::string::npos) break;
      pos = end + 1;
    }
    return log.substr(0, 300);
  }

  void unsupported(const std::string& id, int lanes, const std::string& reason) {
    unsupported_.push_back({{"series", id}, {"values_per_op", lanes}, {"reason", reason}});
    ctx_.progress(fmt::format("{}: {} x{} unsupported: {}", probe_, id, lanes, reason));
  }

  static Series& series_for(std::vector<Series>& out, const std::string& id, const std::string& probe, Axis x,
                            Axis y) {
    for (auto& s : out)
      if (s.id == id) return s;
    out.push_back(new_series(id, probe, std::move(x), std::move(y)));
    out.back().meta["forms"] = nlohmann::json::array();
    return out.back();
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  std::string probe_;
  TimeBudget budget_;
  Plan plan_;
  HarnessConfig harness_;
  bool ptx_ = false;  // kernels may hold NVIDIA inline PTX
  double isa_ = 0;    // its ISA version (compute capability)
  bool ptx_ok_ = true;
  std::string ptx_note_;
  nlohmann::json unsupported_ = nlohmann::json::array();
  nlohmann::json not_measured_ = nlohmann::json::array();
};

// The matrix a run times, most important first (the budget may end it).
struct Entry {
  const char* type;
  const char* op;
  std::vector<int> lanes;
};

std::vector<Entry> throughput_matrix(bool quick) {
  if (quick)
    return {{"fp32", "fma", {1}},  {"fp32", "add", {1}}, {"int32", "add", {1}}, {"fp32", "mix_fma_add", {1}},
            {"fp32", "fma", {4}},  {"fp64", "fma", {1}}, {"fp16", "fma", {2}},  {"fp32", "native_exp", {1}},
            {"fp32", "sqrt", {1}}, {"int32", "mul", {1}}};
  // Most telling first: a first run on a fresh driver pays its compile times
  // (about 0.2 s per program on the H200) and its budget may end the list;
  // the driver caches the builds, so later runs time all of it.
  return {
      {"fp32", "fma", {1, 4}},       {"fp32", "mad", {1}},        {"fp32", "add", {1, 4}},
      {"fp32", "mul", {1}},          {"fp64", "fma", {1}},        {"fp64", "add", {1}},
      {"fp64", "mul", {1}},          {"fp16", "fma", {2}},        {"fp16", "add", {2}},
      {"fp16", "mul", {2}},          {"int32", "mad", {1}},       {"int32", "add", {1, 4}},
      {"int32", "mul", {1}},         {"int32", "dp4a", {1}},      {"fp32", "mix_fma_add", {1}},
      {"fp32", "mix_fma_iadd", {1}}, {"fp32", "native_sin", {1}}, {"fp32", "native_exp", {1}},
      {"fp32", "native_sqrt", {1}},  {"fp32", "rsqrt", {1}},      {"int64", "add", {1}},
      {"int64", "mul", {1}},         {"int16", "add", {1}},       {"int8", "add", {1, 4}},
      {"fp32", "div", {1}},          {"fp32", "sqrt", {1}},       {"fp32", "exp", {1}},
      {"fp32", "log", {1}},          {"fp32", "sin", {1}},        {"fp32", "native_divide", {1}},
      {"fp32", "native_rsqrt", {1}}, {"fp32", "native_log", {1}}, {"int32", "cvt", {1}},
      {"int32", "div", {1}},         {"int64", "mad", {1}},       {"int16", "mul", {1}},
      {"int8", "mul", {1}},          {"fp64", "div", {1}},        {"fp64", "sqrt", {1}},
  };
}

std::vector<std::pair<const char*, const char*>> latency_matrix(bool quick) {
  if (quick) return {{"fp32", "fma"}, {"fp32", "add"}, {"fp32", "div"}, {"int32", "add"}, {"int32", "mul"}};
  // Basic ops of every type first, then the long sequences: a budget cut
  // (a first run pays the driver's compile times) loses the least.
  return {
      {"fp32", "fma"},        {"fp32", "add"},           {"fp32", "mul"},         {"fp32", "mad"},
      {"fp64", "fma"},        {"fp64", "add"},           {"fp16", "fma"},         {"fp16", "add"},
      {"int32", "add"},       {"int32", "mul"},          {"int32", "mad"},        {"int64", "add"},
      {"int64", "mul"},       {"int16", "add"},          {"int16", "mul"},        {"int8", "add"},
      {"int8", "mul"},        {"int32", "dp4a"},         {"int32", "cvt"},        {"fp32", "div"},
      {"fp32", "sqrt"},       {"fp32", "rsqrt"},         {"fp32", "exp"},         {"fp32", "log"},
      {"fp32", "sin"},        {"fp32", "native_divide"}, {"fp32", "native_sqrt"}, {"fp32", "native_rsqrt"},
      {"fp32", "native_exp"}, {"fp32", "native_log"},    {"fp32", "native_sin"},  {"int32", "div"},
      {"fp64", "mul"},        {"fp64", "div"},           {"fp64", "sqrt"}};
}

bool selected(const ProbeOptions& o, const std::string& type, const std::string& op) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), type + "." + op) != o.ops.end();
}

}  // namespace

std::vector<Series> run_compute_probe(ProbeContext& ctx) {
  ComputeRunner r(ctx, "compute");
  if (ctx.device.info().type == "gpu") r.warm_clock(ctx.options.quick ? 0.1 : 0.4);
  std::vector<Series> out;
  const bool quick_list = ctx.options.quick && ctx.options.ops.empty();
  for (const auto& e : throughput_matrix(quick_list))
    if (selected(ctx.options, e.type, e.op)) r.throughput(e.type, e.op, e.lanes, out);
  out.push_back(r.summary_series("compute.summary", "compute"));
  return out;
}

std::vector<Series> run_oplatency_probe(ProbeContext& ctx) {
  ComputeRunner r(ctx, "oplatency");
  if (ctx.device.info().type == "gpu") r.warm_clock(ctx.options.quick ? 0.05 : 0.1);
  std::vector<Series> out;
  const bool quick_list = ctx.options.quick && ctx.options.ops.empty();
  for (const auto& [type, op] : latency_matrix(quick_list))
    if (selected(ctx.options, type, op)) r.latency(type, op, out);
  out.push_back(r.summary_series("oplatency.summary", "oplatency"));
  return out;
}

std::vector<std::string> compute_op_names() {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const auto& e : throughput_matrix(false)) add(std::string(e.type) + "." + e.op);
  for (const auto& [type, op] : latency_matrix(false)) add(std::string(type) + "." + op);
  return names;
}

const std::map<std::string, int64_t>& compute_plan_limits() {
  // Past these a build takes the driver minutes or a work-group exceeds
  // every device's limit.
  static const std::map<std::string, int64_t> limits = {
      {"chains", 64}, {"unroll", 1024}, {"unroll_slow", 256}, {"items_per_cu", 1 << 16}, {"local", 1024}};
  return limits;
}

}  // namespace gpuscope
