// The matrix family's SPIR-V (kernels/vulkan/matrix_spirv.hpp) and the
// VK_KHR_cooperative_matrix declarations (backends/vulkan/cooperative_matrix.hpp),
// without a device: no Vulkan driver here runs cooperative matrices.
// - The NV flavour is validated whole by spirv-val (SPIRV-Tools 2023.1 knows
//   SPV_NV_cooperative_matrix but not the KHR extension).
// - The KHR flavour is the same module but for its cooperative-matrix
//   instructions (checked by comparing the two instruction by instruction),
//   and those are checked word by word against the registry's operand lists:
//   OpTypeCooperativeMatrixKHR 4456 <id> Component Scope Rows Columns Use,
//   OpCooperativeMatrixLoadKHR 4457 <type> <id> Pointer Layout Stride,
//   OpCooperativeMatrixStoreKHR 4458 Pointer Object Layout Stride,
//   OpCooperativeMatrixMulAddKHR 4459 <type> <id> A B C [Operands mask].
#include "backends/vulkan/cooperative_matrix.hpp"
#include "core/error.hpp"
#include "core/matrix_chain.hpp"
#include "kernels/vulkan/matrix_spirv.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace gpuscope;
using namespace gpuscope::vulkan;

namespace {

struct Instruction {
  uint32_t opcode;
  std::vector<uint32_t> operands;
};

// Splits a module into instructions; fails the test on a malformed stream.
std::vector<Instruction> parse(const std::vector<uint32_t>& words) {
  std::vector<Instruction> out;
  EXPECT_GE(words.size(), 5u);
  EXPECT_EQ(words[0], 0x07230203u);
  EXPECT_EQ(words[1], 0x00010500u);
  size_t i = 5;
  while (i < words.size()) {
    const uint32_t count = words[i] >> 16;
    EXPECT_GE(count, 1u);
    EXPECT_LE(i + count, words.size());
    if (count == 0 || i + count > words.size()) break;
    out.push_back({words[i] & 0xffff, std::vector<uint32_t>(words.begin() + i + 1, words.begin() + i + count)});
    i += count;
  }
  return out;
}

std::string literal_string(const std::vector<uint32_t>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w[i] >> (8 * b)) & 0xff);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

MatrixChainShape shape(const char* a, const char* c, uint32_t m, uint32_t n, uint32_t k) {
  return *matrix_chain_shape(a, a, c, c, m, n, k);
}

const std::vector<std::pair<MatrixChainShape, uint32_t>> kCases = {
    {shape("f16", "f32", 16, 16, 16), 1}, {shape("f16", "f32", 16, 16, 16), 8}, {shape("f16", "f16", 16, 8, 16), 4},
    {shape("i8", "i32", 16, 16, 32), 2},  {shape("u8", "u32", 16, 8, 32), 2},   {shape("f32", "f32", 16, 16, 8), 3},
    {shape("f64", "f64", 8, 8, 4), 1}};

bool is_coop(uint32_t opcode) { return (opcode >= 4456 && opcode <= 4460) || (opcode >= 5358 && opcode <= 5362); }

}  // namespace

// spirv-val accepts the NV flavour for Vulkan 1.2 (SPIR-V 1.5) in every case.
TEST(MatrixSpirv, NvFlavourValidates) {
  if (std::system("spirv-val --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "spirv-val is not installed";
  const auto dir = std::filesystem::temp_directory_path() / "gpuscope_matrix_spirv";
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const auto& [s, chains] : kCases) {
    const auto words = matrix_chain_spirv(s, chains, CoopMatrixFlavour::nv);
    const auto path = dir / ("nv_" + std::to_string(n++) + ".spv");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
    const std::string cmd = "spirv-val --target-env vulkan1.2 " + path.string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << matrix_shape_tag(s) << " x" << chains << ": " << cmd;
  }
}

// Outside the cooperative-matrix instructions (and the constants only they
// name) the KHR module is the NV one, instruction for instruction.
TEST(MatrixSpirv, KhrFlavourIsTheValidatedModuleElsewhere) {
  for (const auto& [s, chains] : kCases) {
    const auto khr = parse(matrix_chain_spirv(s, chains, CoopMatrixFlavour::khr));
    const auto nv = parse(matrix_chain_spirv(s, chains, CoopMatrixFlavour::nv));
    std::map<uint32_t, int> khr_ops, nv_ops;
    for (const auto& i : khr)
      if (!is_coop(i.opcode) && i.opcode != 43 && i.opcode != 42 && i.opcode != 17 && i.opcode != 10) ++khr_ops[i.opcode];
    for (const auto& i : nv)
      if (!is_coop(i.opcode) && i.opcode != 43 && i.opcode != 42 && i.opcode != 17 && i.opcode != 10) ++nv_ops[i.opcode];
    EXPECT_EQ(khr_ops, nv_ops) << matrix_shape_tag(s);
  }
}

// The KHR instructions, word by word.
TEST(MatrixSpirv, KhrInstructionsFollowTheRegistry) {
  for (const auto& [s, chains] : kCases) {
    SCOPED_TRACE(matrix_shape_tag(s) + " x" + std::to_string(chains));
    const auto ins = parse(matrix_chain_spirv(s, chains, CoopMatrixFlavour::khr));
    std::map<uint32_t, uint32_t> constants;  // id -> value (32-bit OpConstant)
    std::map<uint32_t, std::vector<uint32_t>> matrix_types;  // id -> component, scope, rows, cols, use (values)
    bool capability = false, nv_capability = false, extension = false;
    int loads = 0, stores = 0, mul_adds = 0;
    uint32_t acc_type = 0;
    for (const auto& i : ins) {
      if (i.opcode == 17 && i.operands.at(0) == 6022) capability = true;
      if (i.opcode == 17 && i.operands.at(0) == 5357) nv_capability = true;
      if (i.opcode == 10 && literal_string(i.operands, 0) == "SPV_KHR_cooperative_matrix") extension = true;
      if (i.opcode == 43 && i.operands.size() == 3) constants[i.operands[1]] = i.operands[2];
      if (i.opcode == 4456) {
        ASSERT_EQ(i.operands.size(), 6u);
        std::vector<uint32_t> v = {i.operands[1]};
        for (size_t k = 2; k < 6; ++k) v.push_back(constants.at(i.operands[k]));
        matrix_types[i.operands[0]] = v;
        if (v[4] == 2) acc_type = i.operands[0];
      }
      if (i.opcode == 4457) {
        ASSERT_EQ(i.operands.size(), 5u);
        const auto& t = matrix_types.at(i.operands[0]);
        EXPECT_EQ(constants.at(i.operands[3]), 0u);  // RowMajorKHR
        EXPECT_EQ(constants.at(i.operands[4]), t[3]);  // row-major: a row's length apart
        ++loads;
      }
      if (i.opcode == 4458) {
        ASSERT_EQ(i.operands.size(), 4u);
        EXPECT_EQ(constants.at(i.operands[2]), 0u);
        EXPECT_EQ(constants.at(i.operands[3]), s.n);
        ++stores;
      }
      if (i.opcode == 4459) {
        EXPECT_EQ(i.operands[0], acc_type);
        const bool ints = s.a == MatrixType::i8;  // signed components: A, B, C and result
        if (ints) {
          ASSERT_EQ(i.operands.size(), 6u);
          EXPECT_EQ(i.operands[5], 0xFu);
        } else {
          EXPECT_EQ(i.operands.size(), 5u);  // no operands mask: unsigned or float components
        }
        ++mul_adds;
      }
      EXPECT_FALSE(i.opcode >= 5358 && i.opcode <= 5362);
    }
    EXPECT_TRUE(capability);
    EXPECT_FALSE(nv_capability);
    EXPECT_TRUE(extension);
    // Scope subgroup (3), and each use with its rows and columns.
    ASSERT_EQ(matrix_types.size(), 3u);
    std::map<uint32_t, std::vector<uint32_t>> by_use;
    for (const auto& [id, v] : matrix_types) {
      EXPECT_EQ(v[1], 3u);
      by_use[v[4]] = {v[2], v[3]};
    }
    EXPECT_EQ(by_use[0], (std::vector<uint32_t>{s.m, s.k}));
    EXPECT_EQ(by_use[1], (std::vector<uint32_t>{s.k, s.n}));
    EXPECT_EQ(by_use[2], (std::vector<uint32_t>{s.m, s.n}));
    EXPECT_EQ(loads, 3 + static_cast<int>(chains));  // A, B, B2 and each C_j
    EXPECT_EQ(stores, static_cast<int>(chains));
    EXPECT_EQ(mul_adds, 2 * static_cast<int>(chains));
  }
}

TEST(MatrixSpirv, RefusesWhatItCannotExpress) {
  EXPECT_THROW(matrix_chain_spirv(*matrix_chain_shape("bf16", "bf16", "f32", "f32", 16, 16, 16), 1,
                                  CoopMatrixFlavour::khr),
               Unsupported);
  EXPECT_THROW(matrix_chain_spirv(*matrix_chain_shape("f16", "f16", "f16", "f32", 16, 16, 16), 1,
                                  CoopMatrixFlavour::khr),
               Unsupported);
  EXPECT_THROW(matrix_chain_spirv(shape("i8", "i32", 16, 16, 32), 1, CoopMatrixFlavour::nv, true), Unsupported);
  // Saturation is one more operand bit.
  const auto ins = parse(matrix_chain_spirv(shape("i8", "i32", 16, 16, 32), 1, CoopMatrixFlavour::khr, true));
  int saturating = 0;
  for (const auto& i : ins)
    if (i.opcode == 4459 && i.operands.size() == 6 && i.operands[5] == 0x1Fu) ++saturating;
  EXPECT_EQ(saturating, 2);
}

// What the driver lists, as DeviceFeatures::matrix_shapes.
TEST(CooperativeMatrixKhr, ListedPropertiesBecomeShapes) {
  EXPECT_EQ(static_cast<uint32_t>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR), 1000506001u);
  EXPECT_EQ(static_cast<uint32_t>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR), 1000506000u);
  VkCooperativeMatrixPropertiesKHR p{};
  p.MSize = 16;
  p.NSize = 8;
  p.KSize = 32;
  p.AType = VK_COMPONENT_TYPE_SINT8_KHR;
  p.BType = VK_COMPONENT_TYPE_SINT8_KHR;
  p.CType = VK_COMPONENT_TYPE_SINT32_KHR;
  p.ResultType = VK_COMPONENT_TYPE_SINT32_KHR;
  p.saturatingAccumulation = VK_TRUE;
  p.scope = VK_SCOPE_SUBGROUP_KHR;
  const auto s = matrix_shape_of(p);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (MatrixShape{"i8", "i8", "i32", "i32", 16, 8, 32, true}));
  p.AType = static_cast<VkComponentTypeKHR>(kComponentTypeBfloat16);
  EXPECT_EQ(matrix_shape_of(p)->a, "bf16");
  p.AType = VK_COMPONENT_TYPE_SINT16_KHR;
  std::string why;
  EXPECT_FALSE(matrix_shape_of(p, &why));
  p.AType = VK_COMPONENT_TYPE_SINT8_KHR;
  p.scope = VK_SCOPE_WORKGROUP_KHR;
  EXPECT_FALSE(matrix_shape_of(p, &why));
  EXPECT_NE(why.find("scope 2"), std::string::npos);

  VkCooperativeMatrixPropertiesNV nv{};
  nv.MSize = nv.NSize = nv.KSize = 16;
  nv.AType = nv.BType = VK_COMPONENT_TYPE_FLOAT16_NV;
  nv.CType = nv.DType = VK_COMPONENT_TYPE_FLOAT32_NV;
  nv.scope = VK_SCOPE_SUBGROUP_NV;
  EXPECT_EQ(*matrix_shape_of_nv(nv), (MatrixShape{"f16", "f16", "f32", "f32", 16, 16, 16, false}));
}
