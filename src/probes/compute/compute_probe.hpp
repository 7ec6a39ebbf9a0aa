// The parts of the `compute` and `oplatency` probes (src/kernels/opencl/compute.cl,
// its twin src/kernels/compute_twin.hpp):
//   forms.cpp     which program reaches a type (form selection) and its build parameters
//   plan.cpp      the launch shape (chains, unroll, work-items) and --compute-plan
//   check.cpp     the buffers a kernel runs on and the host's check of its output
//   runner.cpp    the measurement: one series per (type, op), the summary
//   selection.cpp which (type, op) a run times, in what order
#pragma once

#include "backends/backend.hpp"
#include "kernels/compute_twin.hpp"
#include "probes/probe.hpp"

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope::compute_probe {

namespace twin = compute_twin;

// ------------------------------------------------------------ forms

// How a form's program reaches its type (compute.cl's KIND_*).
enum class Kind { Float, Int, PtxF16x2 };

// One compiled program: a type in one vector form.
struct Form {
  std::string type;             // finding type name: fp64 fp32 fp16 int64 int32 int16 int8
  Scalar scalar = Scalar::f32;  // the buffers' element type (u32 for PTX f16x2)
  Scalar lane = Scalar::f32;    // one value's type (f16 for PTX f16x2: two in a uint)
  Kind kind = Kind::Float;
  int vec = 1;                  // lanes of the chain's vector type (float4: 4)
  int packed = 1;               // values per scalar (PTX f16x2: two halves in a uint)
  std::string path;             // how the type is reached, for the notes
  int lanes() const { return vec * packed; }
  // The chain's type as C spells it ("float4", "uint"), for the notes.
  std::string elem() const;
  std::string key() const;  // "fp32x4"
  // The twin's arithmetic for this form: in double (the host reference).
  twin::Arith arith() const { return {lane, twin::Rounding::None, kind == Kind::PtxF16x2}; }
};

// What the device offers the compute kernels.
struct Reach {
  bool fp64 = false;
  bool fp16 = false;
  bool integer_dot_product = false;  // the API's own packed int8 dot product (a Vulkan kernel has it)
  bool ptx = false;                  // NVIDIA inline PTX may be used
  double isa = 0;                    // its ISA version (compute capability)
};

// The form of `type` with `lanes` values per op, or the reason there is none.
std::variant<Form, std::string> choose_form(const std::string& type, int lanes, const Reach& reach);

// Why `op`'s needs (twin::Need) are not met on this device, or "".
std::string op_unsupported(const twin::Op& op, const Reach& reach);

// ------------------------------------------------------------ plan

struct Plan {
  int chains = 8;
  int unroll = 32;
  int unroll_slow = 4;
  int lat_unroll = 64;
  int lat_unroll_slow = 16;
  size_t global = 0;
  size_t local = 0;
  size_t pattern_items = 512;  // seeds repeat every this many work-items
  int steps(const twin::Op& op) const { return twin::is_slow(op) ? unroll_slow : unroll; }
  int lat_steps(const twin::Op& op) const { return twin::is_slow(op) ? lat_unroll_slow : lat_unroll; }
};

// The shape for a device of `info`, with --compute-plan's overrides applied.
Plan make_plan(const DeviceInfo& info, bool quick, const std::map<std::string, int64_t>& override);

// The build of tp_<OP> (`throughput`) or lat_<OP> of `op` in `form`. The
// dot-product op (twin::Need::Dp4a) goes through PTX where `has_ptx`, else
// through the API's integer dot product (api_dot=true).
KernelSpec kernel_spec(const Form& form, const twin::Op& op, bool throughput, const Plan& plan, bool has_ptx);

// ------------------------------------------------------------ buffers and checks

struct Buffers {
  std::unique_ptr<Buffer> seed, param, out, cycles;
  std::vector<twin::Value> seeds;  // pattern_items work-items' blocks
  twin::Params params;
  // Float fma and mad tp_ kernels also take a and b by value (float, or
  // double for fp64): compute.cl's THROUGHPUT_KERNEL_BYVAL says why.
  bool by_value = false;
  KernelArg pa = 0.0f, pb = 0.0f;
};

// Seeds and params of `op` in `form` for `items` work-items, uploaded.
Buffers make_buffers(Device& dev, const Form& form, const twin::Op& op, const Plan& plan, size_t items);

// The host's evaluation of work-item `item`'s block after `steps` steps.
std::vector<twin::Value> reference(const Form& form, const twin::Op& op, const Plan& plan, const Buffers& b,
                                   size_t item, size_t steps, bool throughput);

// Throws ValidationError naming `probe`, the form, op, lane and `what` at
// the first lane of `got` that differs from `want` beyond the tolerance.
void check_lanes(const std::string& probe, const Form& form, const twin::Op& op,
                 const std::vector<twin::Value>& got, const std::vector<twin::Value>& want,
                 const std::string& what);

// ------------------------------------------------------------ matrix

// A (type, op) a run times, with the vector forms of its throughput.
struct Entry {
  const char* type;
  const char* op;
  std::vector<int> lanes;
};

// The matrices a run times, most telling first (the budget may end them).
std::vector<Entry> throughput_selection(bool quick);
std::vector<Entry> latency_selection(bool quick);

// The findings' type of (type, op): dp4a runs in the int32 program but its operands are int8.
std::string finding_type(const std::string& type, const twin::Op& op);

}  // namespace gpuscope::compute_probe
