// Sim family `sustain` (src/kernels/opencl/sustain.cl): `fma_load`, every work-item 8 independent fp32
// fma chains for rounds x 8 steps, under the description's clock governor.
// No sim device has a cycle counter (counters=true is Unsupported), so clock[0..1]
// are 0 and the probe reads the clock from throughput.
//
// Semantics: exact (std::fma is correctly rounded, as OpenCL's fma); seeds
// depend on the work-item's id modulo 64, so 64 chains are computed, once
// per round count (the probe repeats two counts).
//
// Time: items x rounds x 64 fmas at sim_op_rate(float FMA) per shader core
// per clock, the clock following GovernorConfig: an idle gap (host wall time
// since the last launch returned) of idle_after_ms or more drops it to
// idle_mhz; busy time climbs it back linearly over ramp_ms; heat (busy time
// less idle time, at least 0) past throttle_after_s lowers the ceiling
// linearly to throttled_fraction over throttle_ramp_s. The launch is
// integrated in 0.1 ms steps. Without a governor the clock is
// core.clock_mhz throughout.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/sustain_twin.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace gpuscope::sim {
namespace {

struct Governor {
  bool started = false;
  std::chrono::steady_clock::time_point last_end;
  double mhz = 0;
  double heat_s = 0;
};

struct ChainMemo {
  std::map<std::pair<uint32_t, std::pair<float, float>>, std::vector<float>> results;  // by rounds, a, b
};

// The clock ceiling at heat h.
double ceiling_mhz(const SimConfig& c, double heat_s) {
  const GovernorConfig& g = c.governor;
  if (!g.present || g.throttle_after_s <= 0 || heat_s <= g.throttle_after_s) return c.core.clock_mhz;
  const double x = std::min(1.0, (heat_s - g.throttle_after_s) / g.throttle_ramp_s);
  return c.core.clock_mhz * (1 - (1 - g.throttled_fraction) * x);
}

double fma_load(SimLaunch& l) {
  if (l.spec().flag("counters"))
    throw Unsupported("sim: sustain's cycle counters (no sim device has one)");
  SimBuffer& out = l.buffer(0);
  SimBuffer& clock = l.buffer(1);
  const uint32_t rounds = l.u32(2);
  const float a = l.f32(3), b = l.f32(4);
  const size_t items = l.global().total();
  if (out.size_bytes() < items * sizeof(float) || clock.size_bytes() < 2 * sizeof(uint64_t))
    throw DeviceError("sim: sustain.cl buffers smaller than the launch");

  auto& memo = l.state<ChainMemo>("sustain.chains");
  auto& chains = memo.results[{rounds, {a, b}}];
  if (chains.empty()) {
    for (uint32_t k = 0; k < sustain_twin::kItemPeriod; ++k)
      chains.push_back(sustain_twin::item_result(k, rounds, a, b));
  }
  std::vector<float> result(items);
  for (size_t i = 0; i < items; ++i) result[i] = chains[i % sustain_twin::kItemPeriod];
  out.write(0, std::as_bytes(std::span<const float>(result)));
  const uint64_t zeros[2] = {0, 0};
  clock.write(0, std::as_bytes(std::span<const uint64_t>(zeros)));

  const SimConfig& c = l.config();
  const GovernorConfig& g = c.governor;
  const double fmas = static_cast<double>(items) * rounds * 64;
  const double per_clock = sim_op_rate(c, "float", "FMA") * c.core.shader_cores;  // fmas per cycle
  double cycles = fmas / per_clock;
  if (!g.present) return cycles / c.clock_ghz();

  auto& gov = l.state<Governor>("sustain.governor");
  const auto now = std::chrono::steady_clock::now();
  if (!gov.started) {
    gov = {true, now, g.idle_mhz, 0};
  } else {
    const double idle_s = std::chrono::duration<double>(now - gov.last_end).count();
    gov.heat_s = std::max(0.0, gov.heat_s - idle_s);
    if (idle_s * 1e3 >= g.idle_after_ms) gov.mhz = g.idle_mhz;
  }
  const double climb_per_ns = g.ramp_ms > 0 ? (c.core.clock_mhz - g.idle_mhz) / (g.ramp_ms * 1e6) : 1e30;
  constexpr double kStepNs = 1e5;
  double ns = 0;
  while (cycles > 0) {
    const double top = ceiling_mhz(c, gov.heat_s);
    gov.mhz = std::min(top, gov.mhz + climb_per_ns * kStepNs);
    if (gov.mhz > top) gov.mhz = top;
    const double step_cycles = gov.mhz * 1e-3 * kStepNs;
    const double used = std::min(cycles, step_cycles);
    const double dt = kStepNs * used / step_cycles;
    cycles -= used;
    ns += dt;
    gov.heat_s += dt * 1e-9;
  }
  // The next gap is measured from when the host sees this launch end.
  gov.last_end = std::chrono::steady_clock::now();
  return ns;
}

}  // namespace

void register_sim_family_sustain(FamilyTable& table) { table.add({"sustain", "fma_load", 0, fma_load}); }

}  // namespace gpuscope::sim
