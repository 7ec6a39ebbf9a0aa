// Sim family `divergence` (src/kernels/opencl/divergence.cl): `diverge` (two branch sides chosen by bit
// `block_shift` of the local id) and `partition` (only some waves of each
// work-group work).
//
// Semantics: the OpenCL C's, per work-item: CHAINS fp32 chains from
// seed[gid] + c, `iters` times fma, summed in order. A work-item's result
// depends only on its seed and side, so it is computed once per distinct
// (seed, side) and a chain stops early at a fixed point (fma(x) == x: every
// further step is the same, so the result is exact).
//
// Time: issue slots. Lanes pay for both sides in groups of the description's
// divergence_granularity consecutive work-items of a work-group: a group
// whose lanes disagree issues both loops one after the other, each over the
// whole group; a group that agrees issues one. Slots (lanes x fma) run at
// the fp32 fma rate of the device (sim_op_rate: the compute family's rule).
// partition: hardware waves of core.wave_width run on the core's units
// (scheduler partitions) round-robin by wave index; a wave with any working
// lane costs a full wave; the busiest unit sets the time of a work-group,
// and work-groups spread over the cores one round at a time.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/divergence_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace gpuscope::sim {
namespace {

int chains_of(SimLaunch& l) {
  const auto c = l.spec().integer("chains", 0);
  if (c <= 0 || c > 256) throw DeviceError("sim: divergence needs chains 1..256");
  return static_cast<int>(c);
}

size_t group_size(SimLaunch& l) {
  const size_t wg = l.local().total();
  if (wg) return wg;
  return std::min<size_t>(l.global().total(), l.config().core.max_work_group_size);
}

double fma_ns(SimLaunch& l, double lane_ops) {
  const auto& c = l.config();
  return lane_ops / (sim_op_rate(c, "float", "FMA") * c.core.shader_cores * c.clock_ghz());
}

// diverge(seed, out, block_shift, iters_a, iters_b, a, b)
double diverge(SimLaunch& l) {
  const int chains = chains_of(l);
  const SimBuffer& seed = l.buffer(0);
  SimBuffer& out = l.buffer(1);
  const uint32_t shift = l.u32(2), iters_a = l.u32(3), iters_b = l.u32(4);
  const float a = l.f32(5), b = l.f32(6);
  const size_t n = l.global().total();
  if (n * 4 > seed.size_bytes() || n * 4 > out.size_bytes())
    throw DeviceError("sim: divergence diverge reads or writes past its buffers");
  const size_t wg = group_size(l);
  const auto side_a = [&](size_t lid) { return shift >= 32 || ((lid >> shift) & 1u) == 0; };

  const auto seeds = seed.load_all<float>(n);
  std::vector<float> res(n);
  std::map<std::pair<uint32_t, bool>, float> memo;
  for (size_t g = 0; g < n; ++g) {
    const bool sa = side_a(g % wg);
    const auto key = std::make_pair(std::bit_cast<uint32_t>(seeds[g]), sa);
    auto it = memo.find(key);
    if (it == memo.end())
      it = memo.emplace(key, sa ? divergence_twin::side_sum(seeds[g], chains, iters_a, a, b)
                                : divergence_twin::side_sum(seeds[g], chains, iters_b, b, a))
               .first;
    res[g] = it->second;
  }
  out.write(0, std::as_bytes(std::span<const float>(res)));

  // Issue slots of one work-group, groups of G lanes.
  const size_t gran = l.config().divergence_granularity;
  double slots = 0;
  for (size_t start = 0; start < wg; start += gran) {
    bool has_a = false, has_b = false;
    for (size_t lid = start; lid < std::min(wg, start + gran); ++lid) (side_a(lid) ? has_a : has_b) = true;
    slots += static_cast<double>(gran) * ((has_a ? iters_a : 0.0) + (has_b ? iters_b : 0.0));
  }
  const double groups = std::ceil(static_cast<double>(n) / static_cast<double>(wg));
  return fma_ns(l, slots * groups * chains);
}

// partition(seed, out, wave_width, stride, active_waves, iters, a, b)
double partition(SimLaunch& l) {
  const int chains = chains_of(l);
  const SimBuffer& seed = l.buffer(0);
  SimBuffer& out = l.buffer(1);
  const uint32_t width = l.u32(2), stride = l.u32(3), active = l.u32(4), iters = l.u32(5);
  const float a = l.f32(6), b = l.f32(7);
  if (width == 0 || stride == 0) throw DeviceError("sim: divergence partition divides by zero");
  const size_t n = l.global().total();
  if (n * 4 > seed.size_bytes() || n * 4 > out.size_bytes())
    throw DeviceError("sim: divergence partition reads or writes past its buffers");
  const size_t wg = group_size(l);
  const auto works = [&](size_t lid) {
    const size_t w = lid / width;
    return w % stride == 0 && w / stride < active;
  };
  const auto seeds = seed.load_all<float>(n);
  std::map<uint32_t, float> memo;
  for (size_t g = 0; g < n; ++g) {
    if (!works(g % wg)) continue;  // returns at once, writes nothing
    const uint32_t key = std::bit_cast<uint32_t>(seeds[g]);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, divergence_twin::side_sum(seeds[g], chains, iters, a, b)).first;
    out.store<float>(g * 4, it->second);
  }

  const auto& c = l.config();
  const size_t hw = c.core.wave_width, units = c.core.units_per_core;
  std::vector<double> per_unit(units, 0);
  for (size_t h = 0; h * hw < wg; ++h) {
    bool any = false;
    for (size_t lid = h * hw; lid < std::min(wg, (h + 1) * hw) && !any; ++lid) any = works(lid);
    if (any) per_unit[h % units] += static_cast<double>(hw) * iters * chains;
  }
  const double busiest = *std::max_element(per_unit.begin(), per_unit.end());
  const double rounds =
      std::ceil(std::ceil(static_cast<double>(n) / static_cast<double>(wg)) / c.core.shader_cores);
  const double unit_rate = sim_op_rate(c, "float", "FMA") / static_cast<double>(units);  // per clock
  return rounds * busiest / (unit_rate * c.clock_ghz());
}

}  // namespace

void register_sim_family_divergence(FamilyTable& table) {
  table.add({"divergence", "diverge", 0, diverge});
  table.add({"divergence", "partition", 0, partition});
}

}  // namespace gpuscope::sim
