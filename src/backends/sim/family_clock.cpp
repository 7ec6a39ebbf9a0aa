// Sim family `clock` (src/kernels/opencl/clock.cl): `chain`, one work-item running x = x * x + c
// (uint32, dependent) for rounds x 16 steps. No sim device has a cycle
// counter (counters=true is Unsupported), so out[0] and out[1] are 0 and
// out[2] is x.
//
// Semantics: exact, in uint32 arithmetic. The probe repeats one step count
// many times (and calibrates upwards), so the last chain computed is
// memoised by seed and continued when a longer one is asked for.
//
// Time: each step is one integer multiply-add whose input is the previous
// step's output, so a step takes the int mad's dependent latency
// (sim_op_latency_ns: the description's latency_ns for int mad, else derived
// from its rate by family_compute.cpp's rules). A pipeline's latency is a
// whole number of its clock's cycles: a described latency that is not (a
// figure measured at another clock, or averaged over a loop) is taken to the
// nearest whole cycle at core.clock_mhz, at least one.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

constexpr uint64_t kStepsPerRound = 16;

struct ChainMemo {
  bool valid = false;
  uint32_t seed = 0;
  uint64_t steps = 0;
  uint32_t x = 0;
};

double chain(SimLaunch& l) {
  if (l.spec().flag("counters"))
    throw Unsupported("sim: clock's cycle counters (no sim device has one)");
  SimBuffer& out = l.buffer(0);
  const uint32_t rounds = l.u32(1);
  const uint32_t seed = l.u32(2);
  if (l.global().total() != 1)
    throw Unsupported("sim: clock chain is modelled for the one work-item the probe launches");
  if (out.size_bytes() < 3 * sizeof(uint64_t))
    throw DeviceError("sim: clock out holds fewer than 3 ulongs");

  const uint64_t steps = uint64_t{rounds} * kStepsPerRound;
  auto& m = l.state<ChainMemo>("clock.chain");
  if (!m.valid || m.seed != seed || m.steps > steps) m = ChainMemo{true, seed, 0, seed};
  const uint32_t c = seed | 1u;
  uint32_t x = m.x;
  for (uint64_t i = m.steps; i < steps; ++i) x = x * x + c;
  m.steps = steps;
  m.x = x;
  const uint64_t result[3] = {0, 0, x};
  out.write(0, std::as_bytes(std::span<const uint64_t>(result)));

  const auto& cfg = l.config();
  const double cycles = std::max(1.0, std::round(sim_op_latency_ns(cfg, "int", "MAD") * cfg.clock_ghz()));
  return static_cast<double>(steps) * cycles / cfg.clock_ghz();
}

}  // namespace

void register_sim_family_clock(FamilyTable& table) { table.add({"clock", "chain", 1, chain}); }

}  // namespace gpuscope::sim
