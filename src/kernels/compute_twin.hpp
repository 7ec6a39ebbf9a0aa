// Host-side twin of the `compute` kernel family (src/kernels/opencl/compute.cl):
// its op table, the element values its buffers hold, the parameters and
// seeds the probe gives it, and its maps evaluated on the host. The probe's
// validation (src/probes/compute/) and the sim family
// (src/backends/sim/family_compute.cpp) both evaluate the kernels through
// this file, so each map is written once in C++ beside the OpenCL C.
// tests/test_compute_twin.cpp checks that compute.cl defines the kernels this
// table lists, with the same slow/fast split.
#pragma once

#include "backends/kernel_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::compute_twin {

// The map a kernel applies to each chain (compute.cl's STEP_<OP> macros);
// the native_ forms share their precise form's map.
enum class Map { Add, Mul, Fma, Div, Sqrt, Rsqrt, Exp, Log, Sin, Cvt, Dp4a, MixFmaAdd, MixFmaIadd };

// The finding types compute.cl's programs cover, as bits of a mask.
enum TypeBit : unsigned {
  kFp64 = 1u << 0,
  kFp32 = 1u << 1,
  kFp16 = 1u << 2,
  kInt64 = 1u << 3,
  kInt32 = 1u << 4,
  kInt16 = 1u << 5,
  kInt8 = 1u << 6,
  kFloats = kFp64 | kFp32 | kFp16,
  kInts = kInt64 | kInt32 | kInt16 | kInt8,
};

// What an op needs beyond its type.
enum class Need {
  None,
  // An int8 dot-product instruction: NVIDIA inline PTX dp4a (ISA 6.1+), or
  // the API's packed int8 dot product (DeviceFeatures::integer_dot_product;
  // the kernel parameter api_dot asks for it).
  Dp4a,
};

// Which program of a form holds an op's kernels (compute.cl's OPS_* sets).
enum class Program {
  Fast,  // the one OPS_FAST program of the cheap ops; UNROLL / LAT_UNROLL steps per trip
  Own,   // a program of its own (OPS_<OP>); UNROLL / LAT_UNROLL
  Slow,  // a program of its own, SLOW_KERNELS: UNROLL_SLOW / LAT_UNROLL_SLOW, scalar forms only
};

// One op of compute.cl: what it computes, the types it applies to, what it
// needs, and what one op counts as.
struct Op {
  const char* name;    // finding id part and --ops name: "native_sin"
  const char* kernel;  // compute.cl's kernel suffix: tp_NATIVE_SIN, lat_NATIVE_SIN
  Map map;
  unsigned types;          // TypeBit mask: the types whose programs hold it
  Program program;         // which program holds it, and how far it is unrolled
  bool vectors;            // has vector forms (tp_ of VEC > 1)
  bool latency;            // has a lat_ kernel
  bool independent_floats;  // float tp_ runs x and y as independent chains and takes a and b by value
                            // (INDEP_KERNELS, THROUGHPUT_KERNEL_BYVAL)
  bool packed_half;         // in the NVIDIA packed-half program (KIND_PTX_F16X2)
  Need need;
  const char* finding_type;  // the findings' type when it is not the program's ("int8" for dp4a), else ""
  double flop_per_op;        // 2 for fused multiply-adds (and 8 for dp4a's int8 products); 1 otherwise
  const char* counted;       // what one op is, for the notes
};

inline bool is_slow(const Op& op) { return op.program == Program::Slow; }

// Every op of compute.cl, in one table.
std::span<const Op> ops();
// The op named `name` ("fma"), or nullptr.
const Op* find_op(std::string_view name);
// The op with kernel suffix `kernel` ("FMA"), or nullptr.
const Op* find_kernel(std::string_view kernel);

// Whether the program of `scalar` with `vec` lanes and kind `ptx_f16x2`
// (NVIDIA packed halves) holds tp_<op> (`throughput`) or lat_<op>; the
// dot-product op (dp4a) is counted as held when `vendor` is set (the program
// was built with a path to one: PTX or the API's).
bool holds(const Op& op, Scalar scalar, int vec, bool ptx_f16x2, bool throughput, bool vendor);
// The TypeBit of a program scalar (0 for u32/u64).
unsigned type_bit(Scalar scalar);

// ------------------------------------------------------------ element values

// IEEE binary16, round to nearest even, with subnormals, inf and NaN.
uint16_t half_bits(double v);
double half_value(uint16_t h);
inline double round_half(double v) { return half_value(half_bits(v)); }

// `v` wrapped to a signed integer of `bytes` bytes (two's complement).
int64_t wrap(uint64_t v, size_t bytes);

// One lane's value: floats in `f`, integers (and the int32 lanes of the
// fp32/int32 mix) in `i`.
struct Value {
  double f = 0;
  int64_t i = 0;
};

// A lane of `scalar` read from / written to little-endian bytes (hosts and
// the devices modelled are little-endian); `as_int` reads float storage as
// a 32-bit integer (the mix's int32 lanes).
Value load_value(Scalar scalar, const std::byte* p, bool as_int = false);
void store_value(Scalar scalar, const Value& v, std::byte* p, bool as_int = false);

// Whether lane `k` of a work-item's block holds an int32 rather than the
// program's scalar: the fp32/int32 mix lays each chain pair out as
// [x, y, p, q] with p and q int32.
inline bool int_lane(const Op& op, size_t k) { return op.map == Map::MixFmaIadd && k % 4 >= 2; }

// A work-item's block: 2 * chains * vec lanes, chain c's x lanes then its y lanes.
std::vector<Value> load_block(const Op& op, Scalar scalar, std::span<const std::byte> bytes);
std::vector<std::byte> store_block(const Op& op, Scalar scalar, std::span<const Value> block);

// ------------------------------------------------------------ parameters and seeds

struct Params {
  double fa = 0, fb = 0;  // float operands a and b (before rounding to the element type)
  int64_t ia = 0, ib = 0;  // integer operands, wrapped to the element width
};

// a and b for `op` on a program of `scalar` (integer ones wrapped to its width).
Params params_for(const Op& op, Scalar scalar);

// The device's rounding of a host value of `scalar` (half, float, or exact).
double device_round(Scalar scalar, double v);

// `values` seed lanes for `op` on `scalar` from a SplitMix64 stream: floats
// in [0.5, 2) rounded to the element type, integers wrapped (odd for mul,
// |v| < 2^29 for cvt), the mix's int32 lanes the bits of a float seed.
std::vector<Value> make_seeds(const Op& op, Scalar scalar, size_t values, uint64_t seed);

// Relative tolerance of a float lane after a validation trip evaluated in
// double (Rounding::None): the maps are contractions or neutral, so the
// device's error stays a few ulp per op.
double tolerance(Scalar scalar);

// ------------------------------------------------------------ the maps

// How the host evaluates float maps: in double throughout (the probe's
// reference, compared with tolerance()), or rounded to the element type
// after every op as the device does (the sim).
enum class Rounding { None, Element };

struct Arith {
  Scalar scalar = Scalar::f32;  // the lanes' element type (f16 for NVIDIA packed halves)
  Rounding rounding = Rounding::None;
  bool packed_half = false;  // the KIND_PTX_F16X2 program: its fma is the dependent STEP_FMA
};

// Runs `steps` steps of every chain of one work-item's block in place.
// `throughput`: the tp_ kernel's maps (float fma and mad run x and y as
// independent chains there: compute.cl's TP_STEP_FMA); else the lat_ one.
void run_block(const Op& op, const Arith& arith, int chains, int vec, uint64_t steps, bool throughput,
               const Value& a, const Value& b, std::span<Value> block);

}  // namespace gpuscope::compute_twin
