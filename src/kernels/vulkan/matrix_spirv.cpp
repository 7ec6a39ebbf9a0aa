#include "kernels/vulkan/matrix_spirv.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string_view>

namespace gpuscope::vulkan {
namespace {

// Core SPIR-V numbers (SPIR-V 1.5 specification, section 3).
namespace op {
constexpr uint32_t Extension = 10, MemoryModel = 14, EntryPoint = 15, ExecutionMode = 16, Capability = 17,
                   TypeVoid = 19, TypeBool = 20, TypeInt = 21, TypeFloat = 22, TypeVector = 23,
                   TypeRuntimeArray = 29, TypeStruct = 30, TypePointer = 32, TypeFunction = 33, ConstantFalse = 42,
                   Constant = 43, SpecConstant = 50, SpecConstantComposite = 51, Function = 54, FunctionEnd = 56,
                   Variable = 59, Load = 61, AccessChain = 65, Decorate = 71, MemberDecorate = 72,
                   CompositeExtract = 81, IAdd = 128, IMul = 132, ULessThan = 176, Phi = 245, LoopMerge = 246,
                   Label = 248, Branch = 249, BranchConditional = 250, Return = 253;
// SPV_KHR_cooperative_matrix.
constexpr uint32_t TypeCooperativeMatrixKHR = 4456, CooperativeMatrixLoadKHR = 4457,
                   CooperativeMatrixStoreKHR = 4458, CooperativeMatrixMulAddKHR = 4459;
// SPV_NV_cooperative_matrix.
constexpr uint32_t TypeCooperativeMatrixNV = 5358, CooperativeMatrixLoadNV = 5359, CooperativeMatrixStoreNV = 5360,
                   CooperativeMatrixMulAddNV = 5361;
}  // namespace op

namespace cap {
constexpr uint32_t Shader = 1, Float16 = 9, Float64 = 10, Int8 = 39, GroupNonUniform = 61,
                   StorageBuffer16BitAccess = 4433, StorageBuffer8BitAccess = 4448, CooperativeMatrixNV = 5357,
                   CooperativeMatrixKHR = 6022;
}

constexpr uint32_t kMagic = 0x07230203, kVersion1_5 = 0x00010500;
constexpr uint32_t kAddressingLogical = 0, kMemoryModelGlsl450 = 1, kExecutionModelGlCompute = 5,
                   kExecutionModeLocalSize = 17;
constexpr uint32_t kStorageInput = 1, kStoragePushConstant = 9, kStorageBuffer = 12;
constexpr uint32_t kDecorationSpecId = 1, kDecorationBlock = 2, kDecorationArrayStride = 6,
                   kDecorationBuiltIn = 11, kDecorationBinding = 33, kDecorationDescriptorSet = 34,
                   kDecorationOffset = 35;
constexpr uint32_t kBuiltInWorkgroupSize = 25, kBuiltInWorkgroupId = 26, kBuiltInNumSubgroups = 38,
                   kBuiltInSubgroupId = 40;
constexpr uint32_t kScopeSubgroup = 3;
// CooperativeMatrixUse and CooperativeMatrixLayout (KHR), and the
// CooperativeMatrixOperands mask bits.
constexpr uint32_t kUseA = 0, kUseB = 1, kUseAccumulator = 2, kLayoutRowMajor = 0;
constexpr uint32_t kOperandASigned = 0x1, kOperandBSigned = 0x2, kOperandCSigned = 0x4,
                   kOperandResultSigned = 0x8, kOperandSaturating = 0x10;

// A module under construction: ids, the logical layout's sections, and
// interned types and constants (SPIR-V forbids declaring a scalar type twice).
class Module {
 public:
  uint32_t id() { return bound_++; }

  void capability(uint32_t c) {
    if (capabilities_.insert(c).second) emit(caps_, op::Capability, {c});
  }
  void extension(std::string_view name) { emit(exts_, op::Extension, string_words(name)); }

  uint32_t type(uint32_t opcode, std::vector<uint32_t> operands) {
    auto key = operands;
    key.insert(key.begin(), opcode);
    if (auto it = interned_.find(key); it != interned_.end()) return it->second;
    const uint32_t r = id();
    operands.insert(operands.begin(), r);
    emit(globals_, opcode, operands);
    interned_[key] = r;
    return r;
  }
  // A constant (OpConstant, OpConstantFalse ...): result type, then id.
  uint32_t constant_of(uint32_t opcode, uint32_t type_id, std::vector<uint32_t> operands) {
    std::vector<uint32_t> key = {opcode, type_id};
    key.insert(key.end(), operands.begin(), operands.end());
    if (auto it = interned_.find(key); it != interned_.end()) return it->second;
    const uint32_t r = global(opcode, type_id, operands);
    interned_[key] = r;
    return r;
  }
  uint32_t constant(uint32_t type_id, uint32_t value) { return constant_of(op::Constant, type_id, {value}); }

  void decorate(uint32_t target, uint32_t decoration, std::vector<uint32_t> extra = {}) {
    extra.insert(extra.begin(), {target, decoration});
    emit(decorations_, op::Decorate, extra);
  }
  void member_decorate(uint32_t target, uint32_t member, uint32_t decoration, std::vector<uint32_t> extra = {}) {
    extra.insert(extra.begin(), {target, member, decoration});
    emit(decorations_, op::MemberDecorate, extra);
  }
  // A global or function-local instruction with a fresh result id after its
  // result type: returns the id.
  uint32_t global(uint32_t opcode, uint32_t result_type, std::vector<uint32_t> operands) {
    const uint32_t r = id();
    operands.insert(operands.begin(), {result_type, r});
    emit(globals_, opcode, operands);
    return r;
  }
  uint32_t code(uint32_t opcode, uint32_t result_type, std::vector<uint32_t> operands) {
    const uint32_t r = id();
    operands.insert(operands.begin(), {result_type, r});
    emit(code_, opcode, operands);
    return r;
  }
  void code_void(uint32_t opcode, std::vector<uint32_t> operands) { emit(code_, opcode, operands); }
  void entry_point(uint32_t fn, std::string_view name, const std::vector<uint32_t>& interface) {
    std::vector<uint32_t> w = {kExecutionModelGlCompute, fn};
    for (uint32_t x : string_words(name)) w.push_back(x);
    w.insert(w.end(), interface.begin(), interface.end());
    emit(entry_, op::EntryPoint, w);
  }
  void execution_mode(std::vector<uint32_t> operands) { emit(modes_, op::ExecutionMode, operands); }

  std::vector<uint32_t> words() const {
    std::vector<uint32_t> out = {kMagic, kVersion1_5, 0, bound_, 0};
    std::vector<uint32_t> memory_model;
    emit(memory_model, op::MemoryModel, {kAddressingLogical, kMemoryModelGlsl450});
    const std::vector<uint32_t>* sections[] = {&caps_,  &exts_,        &memory_model, &entry_,
                                               &modes_, &decorations_, &globals_,     &code_};
    for (const auto* s : sections) out.insert(out.end(), s->begin(), s->end());
    return out;
  }

 private:
  static void emit(std::vector<uint32_t>& to, uint32_t opcode, const std::vector<uint32_t>& operands) {
    to.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | opcode);
    to.insert(to.end(), operands.begin(), operands.end());
  }
  // A literal string: UTF-8 bytes, NUL-terminated, padded to whole words,
  // first byte in the lowest-order bits.
  static std::vector<uint32_t> string_words(std::string_view s) {
    std::vector<uint32_t> w(s.size() / 4 + 1, 0);
    for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(s[i])) << (8 * (i % 4));
    return w;
  }

  uint32_t bound_ = 1;
  std::set<uint32_t> capabilities_;
  std::map<std::vector<uint32_t>, uint32_t> interned_;
  std::vector<uint32_t> caps_, exts_, entry_, modes_, decorations_, globals_, code_;
};

struct Element {
  uint32_t type_id;
  uint32_t bytes;
  bool signed_int;
};

Element element(Module& mod, MatrixType t) {
  switch (t) {
    case MatrixType::f16:
      mod.capability(cap::Float16);
      mod.capability(cap::StorageBuffer16BitAccess);
      return {mod.type(op::TypeFloat, {16}), 2, false};
    case MatrixType::f32: return {mod.type(op::TypeFloat, {32}), 4, false};
    case MatrixType::f64:
      mod.capability(cap::Float64);
      return {mod.type(op::TypeFloat, {64}), 8, false};
    case MatrixType::i8:
    case MatrixType::u8:
      mod.capability(cap::Int8);
      mod.capability(cap::StorageBuffer8BitAccess);
      return {mod.type(op::TypeInt, {8, t == MatrixType::i8 ? 1u : 0u}), 1, t == MatrixType::i8};
    case MatrixType::i32: return {mod.type(op::TypeInt, {32, 1}), 4, true};
    case MatrixType::u32: return {mod.type(op::TypeInt, {32, 0}), 4, false};
    default:
      throw Unsupported(fmt::format("the matrix shader has no {} components (they need SPV_KHR_bfloat16 or "
                                    "SPV_EXT_float8, which its emitter does not write)",
                                    matrix_type_tag(t)));
  }
}

}  // namespace

std::vector<uint32_t> matrix_chain_spirv(const MatrixChainShape& s, uint32_t chains, CoopMatrixFlavour flavour,
                                         bool saturating) {
  if (s.c != s.result)
    throw Unsupported(fmt::format("the matrix shader feeds D back as C, so C ({}) must be the result type ({})",
                                  matrix_type_tag(s.c), matrix_type_tag(s.result)));
  if (chains < 1 || chains > 64) throw Unsupported(fmt::format("matrix shader with {} accumulators (1..64)", chains));
  const bool khr = flavour == CoopMatrixFlavour::khr;
  if (saturating && !khr) throw Unsupported("SPV_NV_cooperative_matrix has no saturating accumulation");

  Module mod;
  mod.capability(cap::Shader);
  mod.capability(cap::GroupNonUniform);
  mod.capability(khr ? cap::CooperativeMatrixKHR : cap::CooperativeMatrixNV);
  mod.extension(khr ? "SPV_KHR_cooperative_matrix" : "SPV_NV_cooperative_matrix");

  const uint32_t t_void = mod.type(op::TypeVoid, {});
  const uint32_t t_bool = mod.type(op::TypeBool, {});
  const uint32_t t_uint = mod.type(op::TypeInt, {32, 0});
  const uint32_t t_v3uint = mod.type(op::TypeVector, {t_uint, 3});
  const auto uconst = [&](uint32_t v) { return mod.constant(t_uint, v); };
  const Element ea = element(mod, s.a), eb = element(mod, s.b), ec = element(mod, s.result);

  // Storage buffers: struct { T data[]; } per element type, one variable per
  // binding.
  std::map<uint32_t, uint32_t> block_of;  // element type id -> pointer-to-block type id
  const auto block_pointer = [&](const Element& e) {
    if (auto it = block_of.find(e.type_id); it != block_of.end()) return it->second;
    const uint32_t rta = mod.type(op::TypeRuntimeArray, {e.type_id});
    mod.decorate(rta, kDecorationArrayStride, {e.bytes});
    const uint32_t st = mod.type(op::TypeStruct, {rta});
    mod.decorate(st, kDecorationBlock);
    mod.member_decorate(st, 0, kDecorationOffset, {0});
    return block_of[e.type_id] = mod.type(op::TypePointer, {kStorageBuffer, st});
  };
  std::vector<uint32_t> interface;
  const auto buffer = [&](const Element& e, uint32_t binding) {
    const uint32_t var = mod.global(op::Variable, block_pointer(e), {kStorageBuffer});
    mod.decorate(var, kDecorationDescriptorSet, {0});
    mod.decorate(var, kDecorationBinding, {binding});
    interface.push_back(var);
    return var;
  };
  const uint32_t buf_a = buffer(ea, 0), buf_b = buffer(eb, 1), buf_b2 = buffer(eb, 2), buf_c = buffer(ec, 3),
                 buf_out = buffer(ec, 4);

  const uint32_t t_pc = mod.type(op::TypeStruct, {t_uint});
  mod.decorate(t_pc, kDecorationBlock);
  mod.member_decorate(t_pc, 0, kDecorationOffset, {0});
  const uint32_t pc = mod.global(op::Variable, mod.type(op::TypePointer, {kStoragePushConstant, t_pc}),
                                 {kStoragePushConstant});
  interface.push_back(pc);

  const auto builtin = [&](uint32_t type_id, uint32_t which) {
    const uint32_t var = mod.global(op::Variable, mod.type(op::TypePointer, {kStorageInput, type_id}), {kStorageInput});
    mod.decorate(var, kDecorationBuiltIn, {which});
    interface.push_back(var);
    return var;
  };
  const uint32_t in_wg_id = builtin(t_v3uint, kBuiltInWorkgroupId);
  const uint32_t in_num_sg = builtin(t_uint, kBuiltInNumSubgroups);
  const uint32_t in_sg_id = builtin(t_uint, kBuiltInSubgroupId);

  // The work-group size, specialised per launch (ids 0, 1, 2).
  uint32_t size_ids[3];
  for (uint32_t d = 0; d < 3; ++d) {
    size_ids[d] = mod.global(op::SpecConstant, t_uint, {1});
    mod.decorate(size_ids[d], kDecorationSpecId, {d});
  }
  const uint32_t wg_size = mod.global(op::SpecConstantComposite, t_v3uint, {size_ids[0], size_ids[1], size_ids[2]});
  mod.decorate(wg_size, kDecorationBuiltIn, {kBuiltInWorkgroupSize});

  // The matrices' types.
  const uint32_t c_scope = uconst(kScopeSubgroup);
  const auto matrix_type = [&](const Element& e, uint32_t rows, uint32_t cols, uint32_t use) {
    if (khr) return mod.type(op::TypeCooperativeMatrixKHR, {e.type_id, c_scope, uconst(rows), uconst(cols), uconst(use)});
    return mod.type(op::TypeCooperativeMatrixNV, {e.type_id, c_scope, uconst(rows), uconst(cols)});
  };
  const uint32_t t_ma = matrix_type(ea, s.m, s.k, kUseA);
  const uint32_t t_mb = matrix_type(eb, s.k, s.n, kUseB);
  const uint32_t t_macc = matrix_type(ec, s.m, s.n, kUseAccumulator);

  const uint32_t c0 = uconst(0), c1 = uconst(1);
  const uint32_t c_row_major = khr ? uconst(kLayoutRowMajor) : mod.constant_of(op::ConstantFalse, t_bool, {});
  uint32_t mul_add_operands = 0;
  if (ea.signed_int) mul_add_operands |= kOperandASigned;
  if (eb.signed_int) mul_add_operands |= kOperandBSigned;
  if (ec.signed_int) mul_add_operands |= kOperandCSigned | kOperandResultSigned;
  if (saturating) mul_add_operands |= kOperandSaturating;

  const auto element_pointer = [&](const Element& e, uint32_t var, uint32_t index) {
    const uint32_t t_ptr = mod.type(op::TypePointer, {kStorageBuffer, e.type_id});
    return mod.code(op::AccessChain, t_ptr, {var, c0, index});
  };
  // Row-major loads and stores, `stride` elements between rows.
  const auto load = [&](uint32_t t_mat, const Element& e, uint32_t var, uint32_t index, uint32_t stride) {
    const uint32_t p = element_pointer(e, var, index);
    if (khr) return mod.code(op::CooperativeMatrixLoadKHR, t_mat, {p, c_row_major, uconst(stride)});
    return mod.code(op::CooperativeMatrixLoadNV, t_mat, {p, uconst(stride), c_row_major});
  };
  const auto mul_add = [&](uint32_t a, uint32_t b, uint32_t c) {
    if (khr) {
      std::vector<uint32_t> operands = {a, b, c};
      if (mul_add_operands) operands.push_back(mul_add_operands);
      return mod.code(op::CooperativeMatrixMulAddKHR, t_macc, operands);
    }
    return mod.code(op::CooperativeMatrixMulAddNV, t_macc, {a, b, c});
  };

  // void main()
  const uint32_t fn = mod.id();
  mod.code_void(op::Function, {t_void, fn, 0, mod.type(op::TypeFunction, {t_void})});
  const uint32_t l_entry = mod.id(), l_header = mod.id(), l_body = mod.id(), l_continue = mod.id(),
                 l_merge = mod.id();
  mod.code_void(op::Label, {l_entry});
  const uint32_t wg_id = mod.code(op::Load, t_v3uint, {in_wg_id});
  const uint32_t wg_x = mod.code(op::CompositeExtract, t_uint, {wg_id, 0});
  const uint32_t num_sg = mod.code(op::Load, t_uint, {in_num_sg});
  const uint32_t sg_id = mod.code(op::Load, t_uint, {in_sg_id});
  const uint32_t subgroup = mod.code(op::IAdd, t_uint, {mod.code(op::IMul, t_uint, {wg_x, num_sg}), sg_id});
  const uint32_t pairs_ptr =
      mod.code(op::AccessChain, mod.type(op::TypePointer, {kStoragePushConstant, t_uint}), {pc, c0});
  const uint32_t pairs = mod.code(op::Load, t_uint, {pairs_ptr});
  const uint32_t a = load(t_ma, ea, buf_a, c0, s.k);
  const uint32_t b = load(t_mb, eb, buf_b, c0, s.n);
  const uint32_t b2 = load(t_mb, eb, buf_b2, c0, s.n);
  const uint32_t mn = s.m * s.n;
  std::vector<uint32_t> c_init(chains);
  for (uint32_t j = 0; j < chains; ++j) c_init[j] = load(t_macc, ec, buf_c, uconst(j * mn), s.n);
  mod.code_void(op::Branch, {l_header});

  // Loop header: the counter and every accumulator are phis of the entry's
  // values and the continue block's.
  mod.code_void(op::Label, {l_header});
  const uint32_t i = mod.id(), i_next = mod.id();
  mod.code_void(op::Phi, {t_uint, i, c0, l_entry, i_next, l_continue});
  std::vector<uint32_t> d(chains), d_next(chains);
  for (uint32_t j = 0; j < chains; ++j) {
    d[j] = mod.id();
    d_next[j] = mod.id();
    mod.code_void(op::Phi, {t_macc, d[j], c_init[j], l_entry, d_next[j], l_continue});
  }
  const uint32_t more = mod.code(op::ULessThan, t_bool, {i, pairs});
  mod.code_void(op::LoopMerge, {l_merge, l_continue, 0});
  mod.code_void(op::BranchConditional, {more, l_body, l_merge});

  // Body: D_j = A x B + D_j for every j, then D_j = A x B2 + D_j.
  mod.code_void(op::Label, {l_body});
  std::vector<uint32_t> half(chains);
  for (uint32_t j = 0; j < chains; ++j) half[j] = mul_add(a, b, d[j]);
  for (uint32_t j = 0; j < chains; ++j) {
    // mul_add allocates a fresh id; the phi names d_next[j], so emit by hand.
    if (khr) {
      std::vector<uint32_t> w = {t_macc, d_next[j], a, b2, half[j]};
      if (mul_add_operands) w.push_back(mul_add_operands);
      mod.code_void(op::CooperativeMatrixMulAddKHR, w);
    } else {
      mod.code_void(op::CooperativeMatrixMulAddNV, {t_macc, d_next[j], a, b2, half[j]});
    }
  }
  mod.code_void(op::Branch, {l_continue});

  mod.code_void(op::Label, {l_continue});
  mod.code_void(op::IAdd, {t_uint, i_next, i, c1});
  mod.code_void(op::Branch, {l_header});

  // After the loop: D_j to out[(subgroup x chains + j) x m x n].
  mod.code_void(op::Label, {l_merge});
  const uint32_t first = mod.code(op::IMul, t_uint, {subgroup, uconst(chains)});
  for (uint32_t j = 0; j < chains; ++j) {
    const uint32_t index = mod.code(op::IMul, t_uint, {mod.code(op::IAdd, t_uint, {first, uconst(j)}), uconst(mn)});
    const uint32_t p = element_pointer(ec, buf_out, index);
    if (khr)
      mod.code_void(op::CooperativeMatrixStoreKHR, {p, d[j], c_row_major, uconst(s.n)});
    else
      mod.code_void(op::CooperativeMatrixStoreNV, {p, d[j], uconst(s.n), c_row_major});
  }
  mod.code_void(op::Return, {});
  mod.code_void(op::FunctionEnd, {});

  mod.entry_point(fn, "main", interface);
  mod.execution_mode({fn, kExecutionModeLocalSize, 1, 1, 1});
  return mod.words();
}

}  // namespace gpuscope::vulkan
