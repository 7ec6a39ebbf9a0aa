// Sim family `compute` (src/kernels/opencl/compute.cl): tp_<OP> (CHAINS independent chains per
// work-item, throughput) and lat_<OP> (one chain in one work-item, latency),
// for the float ops (KIND_FLOAT: float, half, double), the integer ops
// (KIND_INT: long, int, short, char) and the two mixes. The NVIDIA PTX half
// path (KIND_PTX_F16X2) and dp4a need inline PTX, which no sim device
// accepts: a launch of them is Unsupported.
//
// Semantics: the OpenCL C's maps (compute.cl's STEP_* / TP_STEP_* macros) as the
// twin kernels/compute_twin.hpp evaluates them,
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
#include "kernels/compute_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <map>
#include <optional>

namespace gpuscope::sim {
namespace {

namespace twin = compute_twin;

// Distinct lane-ops one launch computes: 2x a one-trip validation launch of
// the probe's largest form (512 seed patterns x 8 chains x 32 steps x 2 ops
// x 4 lanes); slow ops (precise sin, exp, ... in double) an eighth of it.
constexpr double kMaxComputedOps = 2.0 * 1024 * 1024;

double computed_cap(const twin::Op& op) { return twin::is_slow(op) ? kMaxComputedOps / 8 : kMaxComputedOps; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ------------------------------------------------------------ element types

struct Elem {
  Scalar scalar = Scalar::f32;
  std::string type;  // the description's type name: float half double long int short char
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
  static const std::map<Scalar, const char*> types = {
      {Scalar::f32, "float"}, {Scalar::f16, "half"}, {Scalar::f64, "double"}, {Scalar::i64, "long"},
      {Scalar::i32, "int"},   {Scalar::i16, "short"}, {Scalar::i8, "char"}};
  const auto it = types.find(*scalar);
  if (it == types.end()) throw Unsupported(fmt::format("sim: compute with scalar {}", scalar_tag(*scalar)));
  Elem e;
  e.scalar = *scalar;
  e.type = it->second;
  e.bytes = scalar_bytes(*scalar);
  const bool is_float = scalar_is_float(*scalar);
  if (spec.word("kind") == "FLOAT" && !is_float) throw DeviceError("sim: kind FLOAT with an integer scalar");
  if (spec.word("kind") == "INT" && is_float) throw DeviceError("sim: kind INT with a float scalar");
  e.vec = static_cast<int>(l.spec().integer("vec", 1));
  if (e.vec != 1 && e.vec != 2 && e.vec != 4 && e.vec != 8 && e.vec != 16)
    throw DeviceError(fmt::format("sim: compute with vec = {}", e.vec));
  return e;
}

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
// No sim device accepts inline PTX, so never dp4a.
bool compiled_in(SimLaunch& l, const Elem& e, const twin::Op& op, bool throughput) {
  const auto ops = l.spec().word("ops");
  const bool selected =
      ops == "ALL" || ops == op.kernel || (op.program == twin::Program::Fast && ops == "FAST");
  return selected && twin::holds(op, e.scalar, e.vec, false, throughput, false);
}

void fill_poison(SimBuffer& out, size_t bytes) {
  const std::vector<std::byte> ff(std::min<size_t>(bytes, out.size_bytes()), std::byte{0xff});
  out.write(0, ff);
}

// The device's arithmetic: rounded to the element type after every op.
twin::Arith device_arith(const Elem& e) { return {e.scalar, twin::Rounding::Element, false}; }

// Operands a and b: the first two elements of the param buffer.
std::pair<twin::Value, twin::Value> params_of(const Elem& e, const SimBuffer& param) {
  const auto bytes = param.load_all<std::byte>(2 * e.bytes, 0);
  return {twin::load_value(e.scalar, bytes.data()), twin::load_value(e.scalar, bytes.data() + e.bytes)};
}

// tp_<op>(seed, param, out, iters)
double run_tp(SimLaunch& l, const twin::Op& op) {
  const Elem e = elem_of(l);
  if (!compiled_in(l, e, op, true))
    throw DeviceError(fmt::format("sim: kernel tp_{} is not in the program these parameters build", op.kernel));
  const SimBuffer& seed = l.buffer(0);
  const SimBuffer& param = l.buffer(1);
  SimBuffer& out = l.buffer(2);
  const uint32_t iters = l.u32(3);
  const int chains = static_cast<int>(l.spec().integer("chains", 8));
  const bool pairs = op.map == twin::Map::MixFmaAdd || op.map == twin::Map::MixFmaIadd;
  const int steps = static_cast<int>(twin::is_slow(op) ? l.spec().integer("unroll_slow", 4)
                                                       : l.spec().integer("unroll", 32));
  if (chains <= 0 || steps <= 0 || (pairs && chains % 2 != 0))
    throw DeviceError("sim: compute with chains or unroll out of range");
  const size_t items = l.global().total();
  const size_t item_bytes = size_t{2} * chains * e.vec * e.bytes;
  if (items * item_bytes > seed.size_bytes() || items * item_bytes > out.size_bytes())
    throw DeviceError("sim: compute tp_ reads or writes past its buffers");

  // Time: every lane-op of the launch at the op's rate; the mixes at each
  // op's own rate, together when the description dual-issues fma and add.
  const Rates rates(l.config());
  const double values = static_cast<double>(items) * iters * steps * chains * 2 * e.vec;
  double ns = 0;
  if (op.map == twin::Map::MixFmaAdd) {
    const double t_fma = rates.throughput_ns(values / 2, rates.of("float", "FMA"));
    const double t_add = rates.throughput_ns(values / 2, rates.of("float", "ADD"));
    ns = l.config().rates.dual_issue_fma_add ? std::max(t_fma, t_add) : t_fma + t_add;
  } else if (op.map == twin::Map::MixFmaIadd) {
    ns = rates.throughput_ns(values / 2, rates.of("float", "FMA")) +
         rates.throughput_ns(values / 2, rates.of("int", "ADD"));
  } else {
    ns = rates.throughput_ns(values, rates.of(e.type, op.kernel));
  }

  // Semantics, per distinct seed block.
  const auto seeds = seed.load_all<std::byte>(items * item_bytes);
  std::map<std::string, std::vector<std::byte>> done;  // seed block -> out block
  for (size_t it = 0; it < items; ++it) {
    std::string key(reinterpret_cast<const char*>(seeds.data() + it * item_bytes), item_bytes);
    done.emplace(std::move(key), std::vector<std::byte>{});
  }
  const double distinct_ops = static_cast<double>(done.size()) * iters * steps * chains * 2 * e.vec;
  if (distinct_ops > computed_cap(op)) {
    fill_poison(out, items * item_bytes);
    return ns;
  }
  const auto [a, b] = params_of(e, param);
  for (auto& [key, res] : done) {
    auto block = twin::load_block(op, e.scalar, std::as_bytes(std::span(key.data(), key.size())));
    twin::run_block(op, device_arith(e), chains, e.vec, uint64_t{iters} * steps, true, a, b, block);
    res = twin::store_block(op, e.scalar, block);
  }
  for (size_t it = 0; it < items; ++it) {
    const std::string key(reinterpret_cast<const char*>(seeds.data() + it * item_bytes), item_bytes);
    out.write(it * item_bytes, done.at(key));
  }
  return ns;
}

// lat_<op>(seed, param, out, cycles, iters): one chain, one work-item.
double run_lat(SimLaunch& l, const twin::Op& op) {
  const Elem e = elem_of(l);
  if (!compiled_in(l, e, op, false))
    throw DeviceError(fmt::format("sim: kernel lat_{} is not in the program these parameters build", op.kernel));
  const SimBuffer& seed = l.buffer(0);
  const SimBuffer& param = l.buffer(1);
  SimBuffer& out = l.buffer(2);
  SimBuffer& cycles = l.buffer(3);
  const uint32_t iters = l.u32(4);
  const int steps = static_cast<int>(twin::is_slow(op) ? l.spec().integer("lat_unroll_slow", 16)
                                                       : l.spec().integer("lat_unroll", 64));
  if (steps <= 0) throw DeviceError("sim: compute with lat_unroll out of range");
  const Rates rates(l.config());
  const double ops = static_cast<double>(iters) * steps * 2;
  // Every work-item runs the chain (the OpenCL C has no guard): launched
  // wider, they would all store to out[0..1]; one is what the probe launches.
  const double ns = ops * rates.latency_ns(e.type, op.kernel);
  cycles.store<uint64_t>(0, 0);  // no cycle counter without inline PTX
  if (ops > computed_cap(op)) {
    fill_poison(out, 2 * e.bytes);
    return ns;
  }
  const auto [a, b] = params_of(e, param);
  auto chain = twin::load_block(op, e.scalar, seed.load_all<std::byte>(2 * e.bytes, 0));
  twin::run_block(op, device_arith(e), 1, 1, uint64_t{iters} * steps, false, a, b, chain);
  out.write(0, twin::store_block(op, e.scalar, chain));
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
  for (const twin::Op& op : twin::ops()) {
    table.add({"compute", std::string("tp_") + op.kernel, 0, [&op](SimLaunch& l) { return run_tp(l, op); }});
    if (op.latency)
      table.add({"compute", std::string("lat_") + op.kernel, 1, [&op](SimLaunch& l) { return run_lat(l, op); }});
  }
}

}  // namespace gpuscope::sim
