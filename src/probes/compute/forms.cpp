// Form selection and build parameters of the compute probes.
#include "probes/compute/compute_probe.hpp"

#include <fmt/format.h>

namespace gpuscope::compute_probe {
namespace {

// The finding types and the scalar each one's program computes in.
struct TypeRow {
  const char* name;
  Scalar scalar;
};
constexpr TypeRow kTypes[] = {{"fp64", Scalar::f64},  {"fp32", Scalar::f32},  {"fp16", Scalar::f16},
                              {"int64", Scalar::i64}, {"int32", Scalar::i32}, {"int16", Scalar::i16},
                              {"int8", Scalar::i8}};

// compute.cl's inline assembly is NVIDIA PTX; its packed-half instructions
// need ISA 5.3, dp4a 6.1.
constexpr double kPtxHalfIsa = 5.3;
constexpr double kPtxDp4aIsa = 6.1;

}  // namespace

std::string Form::elem() const {
  static const std::map<Scalar, const char*> c_names = {
      {Scalar::i8, "char"},  {Scalar::i16, "short"}, {Scalar::i32, "int"},  {Scalar::i64, "long"},
      {Scalar::u32, "uint"}, {Scalar::u64, "ulong"}, {Scalar::f16, "half"}, {Scalar::f32, "float"},
      {Scalar::f64, "double"}};
  const std::string name = c_names.at(scalar);
  return vec == 1 ? name : name + std::to_string(vec);
}

std::string Form::key() const { return fmt::format("{}x{}", type, lanes()); }

std::variant<Form, std::string> choose_form(const std::string& type, int lanes, const Reach& reach) {
  const TypeRow* row = nullptr;
  for (const auto& t : kTypes)
    if (type == t.name) row = &t;
  if (!row) throw std::logic_error("compute: unknown type " + type);
  Form f;
  f.type = type;
  f.vec = lanes;
  f.scalar = f.lane = row->scalar;
  f.kind = scalar_is_float(row->scalar) ? Kind::Float : Kind::Int;
  f.path = "the API's kernel language";
  if (row->scalar == Scalar::f64 && !reach.fp64) return std::string("the device has no double precision");
  if (row->scalar == Scalar::f16) {
    if (reach.fp16) {
      f.path = "half arithmetic in kernels";
    } else if (reach.ptx && reach.isa >= kPtxHalfIsa) {
      if (lanes != 2) return std::string("the PTX path is packed half2 only");
      f.kind = Kind::PtxF16x2, f.scalar = Scalar::u32, f.vec = 1, f.packed = 2;
      f.path = "NVIDIA inline PTX (add/sub/mul/fma.rn.f16x2): the driver offers no half arithmetic";
    } else {
      return std::string("no half arithmetic and no vendor inline-assembly path for it");
    }
  }
  return f;
}

std::string op_unsupported(const twin::Op& op, const Reach& reach) {
  if (op.need != twin::Need::Dp4a) return "";
  if (reach.ptx && reach.isa >= kPtxDp4aIsa) return "";
  if (reach.integer_dot_product) return "";  // the kernel's build says where the API's form has no kernel
  return "no int8 dot-product instruction reachable: needs NVIDIA inline PTX (dp4a, sm_61+) or the API's "
         "integer dot product (Vulkan: shaderIntegerDotProduct)";
}

// The program holds that op only, or all the fast ops of the form
// (compute.cl says why).
KernelSpec kernel_spec(const Form& f, const twin::Op& op, bool throughput, const Plan& plan, bool has_ptx) {
  const char* kind = f.kind == Kind::Float ? "FLOAT" : f.kind == Kind::Int ? "INT" : "PTX_F16X2";
  return {"compute",
          std::string(throughput ? "tp_" : "lat_") + op.kernel,
          {{"ops", op.program == twin::Program::Fast ? std::string("FAST") : std::string(op.kernel)},
           {"scalar", f.scalar},
           {"vec", f.vec},
           {"kind", kind},
           {"has_ptx", has_ptx},
           {"api_dot", op.need == twin::Need::Dp4a && !has_ptx},
           {"chains", plan.chains},
           {"unroll", plan.unroll},
           {"lat_unroll", plan.lat_unroll},
           {"unroll_slow", plan.unroll_slow},
           {"lat_unroll_slow", plan.lat_unroll_slow}}};
}

std::string finding_type(const std::string& type, const twin::Op& op) {
  return *op.finding_type ? std::string(op.finding_type) : type;
}

}  // namespace gpuscope::compute_probe
