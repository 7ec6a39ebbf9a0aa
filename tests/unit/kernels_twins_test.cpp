// The host-side twins of the kernel families (src/kernels/*_twin.hpp) agree
// with the OpenCL C they describe, and their values are right on their own.
// The .cl files keep their constants (they are valid OpenCL C on their own),
// so these tests read the embedded sources and fail where the two disagree.
#include "kernels/bandwidth_twin.hpp"
#include "kernels/coalescing_twin.hpp"
#include "kernels/compute_twin.hpp"
#include "kernels/divergence_twin.hpp"
#include "kernels/kernel_sources.hpp"
#include "kernels/local_twin.hpp"
#include "kernels/occupancy_twin.hpp"
#include "kernels/sustain_twin.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace gpuscope {
namespace {

namespace ct = compute_twin;

std::string source(const char* path) {
  const KernelSource* s = find_kernel_source(path);
  if (!s) throw std::runtime_error(std::string("no embedded kernel source ") + path);
  return std::string(s->text);
}

// The op names a stretch of compute.cl instantiates, by macro: KERNELS(ADD),
// SLOW_KERNELS(DIV), INDEP_KERNELS(FMA) on lines of their own.
std::map<std::string, std::string> instantiated(const std::string& text) {
  std::map<std::string, std::string> out;
  const std::regex line(R"(^((?:SLOW_|INDEP_)?KERNELS)\((\w+)\)\s*$)", std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it)
    out[(*it)[2]] = (*it)[1];
  return out;
}

// compute.cl's op-set section for one kind: from `#if defined(KIND_X)` to
// the next kind's.
std::string kind_section(const std::string& text, const std::string& kind, const std::string& next) {
  const size_t sets = text.find("// The op set of each kind.");
  EXPECT_NE(sets, std::string::npos);
  const size_t a = text.find("#if defined(" + kind + ")\n", sets);
  const size_t b = next.empty() ? text.find("// Dual issue", a) : text.find("#if defined(" + next + ")\n", a);
  EXPECT_NE(a, std::string::npos) << kind;
  EXPECT_NE(b, std::string::npos) << next;
  return text.substr(a, b - a);
}

TEST(ComputeTwin, TableMatchesTheKernelsComputeClDefines) {
  const std::string text = source("opencl/compute.cl");
  const auto floats = instantiated(kind_section(text, "KIND_FLOAT", "KIND_PTX_F16X2"));
  const auto ptx = instantiated(kind_section(text, "KIND_PTX_F16X2", "KIND_INT"));
  const auto ints = instantiated(kind_section(text, "KIND_INT", ""));
  // The natives sit under `#if !SCALAR_IS_F64` in the float section.
  const std::string float_text = kind_section(text, "KIND_FLOAT", "KIND_PTX_F16X2");
  const auto not_f64 = instantiated(float_text.substr(float_text.find("#if !SCALAR_IS_F64")));

  std::set<std::string> listed;
  for (const ct::Op& op : ct::ops()) {
    listed.insert(op.kernel);
    SCOPED_TRACE(op.name);
    const bool mix = op.map == ct::Map::MixFmaAdd || op.map == ct::Map::MixFmaIadd;
    if (mix) {
      EXPECT_NE(text.find(fmt::format("__kernel void tp_{}(", op.kernel)), std::string::npos);
      EXPECT_FALSE(op.latency);
      continue;
    }
    const std::string macro = ct::is_slow(op) ? "SLOW_KERNELS" : "KERNELS";
    EXPECT_EQ(floats.count(op.kernel) == 1, (op.types & ct::kFloats) != 0);
    EXPECT_EQ(ints.count(op.kernel) == 1, (op.types & ct::kInts) != 0);
    EXPECT_EQ(ptx.count(op.kernel) == 1, op.packed_half);
    EXPECT_EQ(not_f64.count(op.kernel) == 1, (op.types & ct::kFloats) != 0 && (op.types & ct::kFp64) == 0);
    if (floats.count(op.kernel))
      EXPECT_EQ(floats.at(op.kernel), op.independent_floats ? "INDEP_KERNELS" : macro);
    if (ints.count(op.kernel)) EXPECT_EQ(ints.at(op.kernel), macro);
    // An op of its own program is selected by its OPS_<OP> alone; a fast one also by OPS_FAST.
    const std::string fast_guard = fmt::format("defined(OPS_{}) || defined(OPS_ALL) || defined(OPS_FAST)", op.kernel);
    EXPECT_EQ(text.find(fast_guard) != std::string::npos, op.program == ct::Program::Fast);
  }
  for (const auto* set : {&floats, &ptx, &ints})
    for (const auto& [name, macro] : *set) EXPECT_TRUE(listed.count(name)) << name << " is not in the twin's table";
}

TEST(ComputeTwin, HoldsFollowsTheProgramsShapes) {
  const ct::Op& fma = *ct::find_op("fma");
  const ct::Op& div = *ct::find_op("div");
  const ct::Op& dp4a = *ct::find_op("dp4a");
  const ct::Op& mix = *ct::find_op("mix_fma_add");
  EXPECT_TRUE(ct::holds(fma, Scalar::f32, 4, false, true, false));
  EXPECT_FALSE(ct::holds(fma, Scalar::f32, 4, false, false, false));  // lat_ kernels are scalar only
  EXPECT_FALSE(ct::holds(fma, Scalar::i32, 1, false, true, false));
  EXPECT_FALSE(ct::holds(div, Scalar::f32, 4, false, true, false));  // slow ops: scalar only
  EXPECT_TRUE(ct::holds(div, Scalar::i16, 1, false, false, false));
  EXPECT_FALSE(ct::holds(*ct::find_op("native_sin"), Scalar::f64, 1, false, true, false));
  EXPECT_FALSE(ct::holds(dp4a, Scalar::i32, 1, false, true, false));
  EXPECT_TRUE(ct::holds(dp4a, Scalar::i32, 1, false, true, true));
  EXPECT_TRUE(ct::holds(mix, Scalar::f32, 1, false, true, false));
  EXPECT_FALSE(ct::holds(mix, Scalar::f32, 1, false, false, false));
  EXPECT_TRUE(ct::holds(fma, Scalar::u32, 1, true, false, false));
  EXPECT_FALSE(ct::holds(*ct::find_op("mad"), Scalar::u32, 1, true, true, false));
  EXPECT_EQ(ct::find_kernel("NATIVE_LOG"), ct::find_op("native_log"));
  EXPECT_EQ(ct::find_op("nope"), nullptr);
}

TEST(ComputeTwin, HalfFloatsRoundTripAndRoundToNearestEven) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const double v = ct::half_value(bits);
    if (std::isnan(v)) {
      EXPECT_EQ(ct::half_bits(v), 0x7e00u);
      continue;
    }
    ASSERT_EQ(ct::half_bits(v), bits) << fmt::format("{:#06x}", h);
  }
  EXPECT_EQ(ct::half_bits(1.0), 0x3c00u);
  EXPECT_EQ(ct::half_bits(65504.0), 0x7bffu);
  EXPECT_EQ(ct::half_bits(1e6), 0x7c00u);
  EXPECT_EQ(ct::half_bits(1.0 + std::ldexp(1, -11)), 0x3c00u);  // tie: to even
  EXPECT_EQ(ct::half_bits(1.0 + 3 * std::ldexp(1, -11)), 0x3c02u);  // tie: to even, up
  EXPECT_EQ(ct::half_bits(std::ldexp(1, -25) * 3), 0x0002u);        // subnormal 1.5 steps: to even
}

TEST(ComputeTwin, IntegerMapsWrapAsTheDeviceDoes) {
  const ct::Op& add = *ct::find_op("add");
  std::vector<ct::Value> block = {{0, 100}, {0, 100}};
  ct::run_block(add, {Scalar::i8, ct::Rounding::None, false}, 1, 1, 1, false, {}, {}, block);
  EXPECT_EQ(block[0].i, -56);  // 200 wrapped to int8
  EXPECT_EQ(block[1].i, 44);   // 100 + -56

  const ct::Op& dp4a = *ct::find_op("dp4a");
  const ct::Params p = ct::params_for(dp4a, Scalar::i32);
  std::vector<ct::Value> d = {{0, 0}, {0, 0x01010101}};
  ct::run_block(dp4a, {Scalar::i32, ct::Rounding::None, false}, 1, 1, 1, false, {0, p.ia}, {0, p.ib}, d);
  EXPECT_EQ(d[0].i, 17 + 5 - 3 + 3 + 127);

  const ct::Op& div = *ct::find_op("div");
  std::vector<ct::Value> q = {{0, 0}, {0, -1}};
  ct::run_block(div, {Scalar::i32, ct::Rounding::None, false}, 1, 1, 1, false, {0, 1000}, {}, q);
  EXPECT_EQ(q[0].i, -1000);  // 1000 / (-1 | 1)
  EXPECT_EQ(q[1].i, -1);     // 1000 / (-1000 | 1) = 1000 / -999
}

// The sim rounds after every op, the probe's reference does not: over a
// validation trip they agree within the probe's tolerance.
TEST(ComputeTwin, RoundedAndExactEvaluationsAgreeWithinTolerance) {
  for (const char* name : {"add", "mul", "fma", "div", "sqrt", "exp", "log", "sin"}) {
    for (Scalar s : {Scalar::f32, Scalar::f16}) {
      const ct::Op& op = *ct::find_op(name);
      const ct::Params p = ct::params_for(op, s);
      const ct::Value a{ct::device_round(s, p.fa), 0}, b{ct::device_round(s, p.fb), 0};
      const auto seeds = ct::make_seeds(op, s, 16, 42);
      auto exact = seeds, rounded = seeds;
      ct::run_block(op, {s, ct::Rounding::None, false}, 4, 2, 32, true, a, b, exact);
      ct::run_block(op, {s, ct::Rounding::Element, false}, 4, 2, 32, true, a, b, rounded);
      for (size_t k = 0; k < seeds.size(); ++k)
        EXPECT_NEAR(rounded[k].f, exact[k].f, ct::tolerance(s) * std::max(1.0, std::abs(exact[k].f)))
            << name << " " << scalar_tag(s) << " lane " << k;
    }
  }
}

TEST(ComputeTwin, MixedBlockKeepsIntLanesAsIntegers) {
  const ct::Op& mix = *ct::find_op("mix_fma_iadd");
  const auto seeds = ct::make_seeds(mix, Scalar::f32, 8, 7);
  const auto bytes = ct::store_block(mix, Scalar::f32, seeds);
  const auto back = ct::load_block(mix, Scalar::f32, bytes);
  for (size_t k = 0; k < seeds.size(); ++k) {
    if (ct::int_lane(mix, k))
      EXPECT_EQ(back[k].i, seeds[k].i);
    else
      EXPECT_EQ(back[k].f, seeds[k].f);
  }
}

TEST(CoalescingTwin, HashIsCoalescingClHash) {
  const std::string text = source("opencl/coalescing.cl");
  const size_t at = text.find("uint coalescing_hash(uint i, uint seed) {");
  ASSERT_NE(at, std::string::npos);
  const std::string body = text.substr(at, text.find('}', at) - at);
  EXPECT_NE(body.find(fmt::format("(i ^ seed) * 0x{:X}u", coalescing_twin::kHashMultiplier)), std::string::npos)
      << body;
  EXPECT_NE(body.find(fmt::format("x *= 0x{:X}u", coalescing_twin::kHashMix)), std::string::npos) << body;
  EXPECT_NE(body.find("x ^= x >> 15;"), std::string::npos);
  EXPECT_NE(body.find("x ^= x >> 13;"), std::string::npos);
  EXPECT_EQ(coalescing_twin::value(0, 0), 0u);
  EXPECT_NE(coalescing_twin::value(1, 0), coalescing_twin::value(2, 0));
}

TEST(BandwidthTwin, SplatConstantsAreBandwidthCls) {
  const std::string text = source("opencl/bandwidth.cl");
  auto define = [&](const std::string& head) {
    const size_t at = text.find(head);
    EXPECT_NE(at, std::string::npos) << head;
    return text.substr(at, text.find('\n', at) - at);
  };
  const std::string splat4 = define("#define SPLAT4(x)");
  for (int k = 1; k < 4; ++k)
    EXPECT_NE(splat4.find(fmt::format("(x) ^ {:#010x}u", bandwidth_twin::kSplat4[k])), std::string::npos) << k;
  const std::string splat16 = define("#define SPLAT(x) ((uint16)");
  for (int q = 1; q < 4; ++q)
    EXPECT_NE(splat16.find(fmt::format("SPLAT4((x) ^ {:#010x}u)", bandwidth_twin::kSplat16[q])), std::string::npos)
        << q;
  EXPECT_NE(define("#define SPLAT(x) ((uint8)").find(fmt::format("{:#010x}u", bandwidth_twin::kSplat16[1])),
            std::string::npos);
  EXPECT_NE(define("#define SPLAT(x) ((uint2)").find(fmt::format("{:#010x}u", bandwidth_twin::kSplat4[1])),
            std::string::npos);
  // Every hashed store: dst[i] = SPLAT((i * kIndexHash) ^ seed).
  const std::string store = fmt::format("SPLAT((i * {:#010x}u) ^ seed)", bandwidth_twin::kIndexHash);
  size_t stores = 0;
  for (size_t at = text.find(store); at != std::string::npos; at = text.find(store, at + 1)) ++stores;
  EXPECT_EQ(stores, 3u);  // write, write_stream, write_grid

  uint32_t w[16];
  bandwidth_twin::splat(5, 16, w);
  EXPECT_EQ(w[0], 5u);
  EXPECT_EQ(w[5], 5u ^ bandwidth_twin::kSplat16[1] ^ bandwidth_twin::kSplat4[1]);
  bandwidth_twin::splat(5, 2, w);
  EXPECT_EQ(w[1], 5u ^ bandwidth_twin::kSplat4[1]);
}

// The smaller twins: the constants and shapes their kernels spell.
TEST(SmallTwins, ConstantsAreTheirKernels) {
  const std::string sustain = source("opencl/sustain.cl");
  EXPECT_NE(sustain.find("(float)(gid & 63u) * 0.0078125f"), std::string::npos);
  EXPECT_NE(sustain.find("x1 = s + 0.125f"), std::string::npos);
  EXPECT_EQ(sustain_twin::kItemPeriod, 64u);
  // No steps: the chains' starts summed; one round: 64 fmas of a = 1, b = 0.
  EXPECT_FLOAT_EQ(sustain_twin::item_result(65, 0, 1, 0), 8 * 0.0078125f + 3.5f);
  EXPECT_FLOAT_EQ(sustain_twin::item_result(1, 1, 1, 0), sustain_twin::item_result(1, 0, 1, 0));

  const std::string occupancy = source("opencl/occupancy.cl");
  EXPECT_NE(occupancy.find(fmt::format("h = (h ^ r[k]) * 0x{:X}u;", occupancy_twin::kHashMultiplier)),
            std::string::npos);
  EXPECT_NE(occupancy.find("r[k] = lid * (2u * (uint)k + 1u) + (uint)k;"), std::string::npos);
  // A two-slot cycle 0 -> 1 -> 0, one register, one step, from 0: p = 1, sum 1.
  const auto out = occupancy_twin::group_outputs([](uint32_t p) { return 1 - p; }, 0, 1, 1, 2);
  EXPECT_EQ(out[0], ((1u ^ 0u) ^ (0u + 1u)) * occupancy_twin::kHashMultiplier);
  EXPECT_EQ(out[1], ((1u ^ 1u) ^ (1u + 1u)) * occupancy_twin::kHashMultiplier);
  // Three registers, two steps round a five-slot cycle from 2, each lane's
  // hash chained register by register as the kernel does.
  const auto next5 = [](uint32_t p) { return (p + 3) % 5; };
  const auto out3 = occupancy_twin::group_outputs(next5, 2, 3, 2, 7);
  uint32_t p = 2, r[3] = {0, 0, 0};
  for (int s = 0; s < 2; ++s)
    for (uint32_t& sum : r) sum += (p = next5(p));
  for (uint32_t lid = 0; lid < 7; ++lid) {
    uint32_t h = p ^ (lid ^ 2u);
    for (uint32_t k = 0; k < 3; ++k) h = (h ^ (lid * (2u * k + 1u) + k + r[k])) * occupancy_twin::kHashMultiplier;
    EXPECT_EQ(out3[lid], h) << "lane " << lid;
  }

  const std::string local = source("opencl/local.cl");
  EXPECT_NE(local.find(fmt::format("l[i] = i * {:#010x}u;", local_twin::kTouchMultiplier)), std::string::npos);
  uint32_t total = 0;
  for (uint32_t i = 0; i < 1000; ++i) total += local_twin::touch_word(i);
  EXPECT_EQ(local_twin::touch_total(1000), total);

  const std::string divergence = source("opencl/divergence.cl");
  EXPECT_NE(divergence.find("x[c] = s + (float)c;"), std::string::npos);
  EXPECT_FLOAT_EQ(divergence_twin::side_sum(0, 4, 0, 0.5f, 0), 0 + 1 + 2 + 3);
  EXPECT_FLOAT_EQ(divergence_twin::side_sum(0, 2, 1, 0.5f, 1), 1 + 1.5f);
}

}  // namespace
}  // namespace gpuscope
