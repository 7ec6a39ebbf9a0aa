// Sim family `icache` (src/kernels/opencl/icache.cl): `body` (a loop of BODY float adds over eight
// accumulators, -DBODY=N).
//
// Semantics: each work-item's output, eight accumulators starting at s, s+1,
// ..., s+7 (s = start[gid]), each taking iters x BODY / 8 adds of `a`, then
// summed pairwise as the kernel does. Values are exact in float while every
// partial sum is an integer below 2^24 (the probe's a = 1 and small starts):
// then the sums are computed in closed form; otherwise each add is done in
// float, once per distinct start value.
//
// Code: the program's machine code is icache.base_code_bytes plus BODY x
// icache.bytes_per_op (the binary the device reports has that size).
//
// Time: issue-bound adds at the FP32 add rate (sim_op_rate) over every core
// while the loop body (BODY x bytes_per_op; the prologue and epilogue run
// once and need not stay cached) fits icache.capacity_bytes. Past it, every
// wave's every iteration refetches the body from further away at
// icache.miss_bytes_per_clock per core, and the launch takes the longer of
// the two.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuscope::sim {
namespace {

constexpr double kMaxFloatAdds = 64.0 * 1024 * 1024;  // per launch, when the closed form does not apply

long long body_of(const KernelSpec& spec) {
  const int64_t body = spec.integer("body", -1);
  if (body < 0) throw Unsupported("sim: icache without a body parameter");
  return body;
}

SimBuildFacts build_facts(const SimConfig& c, const KernelSpec& spec) {
  SimBuildFacts f;
  f.code_bytes = c.icache.base_code_bytes +
                 static_cast<uint64_t>(std::llround(static_cast<double>(body_of(spec)) * c.icache.bytes_per_op));
  return f;
}

float sum8(const float x[8]) { return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])); }

// body(start, out, iters, a)
double body(SimLaunch& l) {
  const SimBuffer& start = l.buffer(0);
  SimBuffer& out = l.buffer(1);
  const uint32_t iters = l.u32(2);
  const float a = l.f32(3);
  const auto& c = l.config();
  const long long n = l.spec().integer("body", 0);
  if (n <= 0 || n % 64 != 0 || n >= 32768)
    throw Unsupported(fmt::format("sim: icache with BODY={} (a multiple of 64 below 32768)", n));
  const uint64_t items = l.global().total();
  if (start.size_bytes() < items * 4 || out.size_bytes() < items * 4)
    throw DeviceError("sim: icache launch past its buffers");

  const uint64_t per_acc = uint64_t{iters} * static_cast<uint64_t>(n / 8);
  const auto starts = start.load_all<float>(items);
  std::map<float, float> memo;  // start value -> output
  double float_adds = 0;
  std::vector<float> result(items);
  for (uint64_t i = 0; i < items; ++i) {
    const float s = starts[i];
    auto it = memo.find(s);
    if (it == memo.end()) {
      float x[8];
      for (int j = 0; j < 8; ++j) x[j] = s + static_cast<float>(j);
      const double last = static_cast<double>(s) + 7 + static_cast<double>(per_acc) * a;
      const bool exact = a == std::trunc(a) && s == std::trunc(s) && std::abs(static_cast<double>(s)) < 0x1p24 &&
                         std::abs(last) < 0x1p24 && std::abs(static_cast<double>(s)) + 7 < 0x1p24;
      if (exact) {
        for (float& v : x) v = static_cast<float>(static_cast<double>(v) + static_cast<double>(per_acc) * a);
      } else {
        float_adds += 8.0 * static_cast<double>(per_acc);
        if (float_adds > kMaxFloatAdds)
          throw Unsupported("sim: icache with inexact float sums this long is not modelled");
        for (uint64_t k = 0; k < per_acc; ++k)
          for (float& v : x) v += a;
      }
      it = memo.emplace(s, sum8(x)).first;
    }
    result[i] = it->second;
  }
  out.write(0, std::as_bytes(std::span<const float>(result)));

  const double adds = static_cast<double>(items) * static_cast<double>(iters) * static_cast<double>(n);
  const double clock_cores = c.clock_ghz() * c.core.shader_cores;  // core-clocks per ns
  const double issue_ns = adds / (sim_op_rate(c, "float", "ADD") * clock_cores);
  const double loop_bytes = static_cast<double>(n) * c.icache.bytes_per_op;
  if (c.icache.capacity_bytes == 0 || loop_bytes <= static_cast<double>(c.icache.capacity_bytes)) return issue_ns;
  const double waves = std::ceil(static_cast<double>(items) / c.core.wave_width);
  const double fetch_ns = waves * iters * loop_bytes / (c.icache.miss_bytes_per_clock * clock_cores);
  return std::max(issue_ns, fetch_ns);
}

}  // namespace

void register_sim_family_icache(FamilyTable& table) {
  table.add({"icache", "body", 0, body, build_facts});
}

}  // namespace gpuscope::sim
