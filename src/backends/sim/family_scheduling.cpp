// Sim family `scheduling` (src/kernels/opencl/scheduling.cl): `resident` counts the work-groups resident
// at once with a global counter (increment on entry, decrement on exit, the
// largest value seen kept in `peak`).
//
// Semantics: the counters as the OpenCL C leaves them when the device runs
// `resident` groups at once and each stays for its `hold` reads: running
// back at 0, peak = the most groups resident at once (the modelled
// residency, or every launched group when fewer), sink += scratch[(0 + 1)
// % words] + 1 per group (scratch[i] holds the lowest local id that wrote
// it, i < words) or 1 without scratch.
//
// Residency per core: the least of the description's workgroups_per_core,
// the work-items a core holds (units x waves_per_unit x wave_width) over
// the group size, and, for groups that allocate more than one word of local
// memory (the probe's placeholder when it wants none; OpenCL allows no
// empty __local argument), local_memory.workgroups_per_core_with_local
// where given, and for on-chip local memory bytes_per_work_group over the
// group's allocation (assumption: a core's local store holds one maximal
// group's worth).
//
// Time: rounds of resident groups, each hold reads of the counter at the
// DRAM latency (an atomic goes to the last level of memory).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

uint64_t resident_per_core(const SimConfig& c, uint64_t wg, uint64_t local_bytes) {
  const uint64_t items = uint64_t{c.core.units_per_core} * c.core.waves_per_unit * c.core.wave_width;
  uint64_t n = std::min<uint64_t>(c.core.workgroups_per_core,
                                  std::max<uint64_t>(1, items / std::max<uint64_t>(wg, 1)));
  if (local_bytes > 4) {
    if (c.local.workgroups_per_core_with_local > 0)
      n = std::min<uint64_t>(n, c.local.workgroups_per_core_with_local);
    if (c.local.on_chip)
      n = std::min<uint64_t>(n, std::max<uint64_t>(1, c.local.bytes_per_work_group / local_bytes));
  }
  return std::max<uint64_t>(n, 1);
}

// resident(running, peak, sink, scratch_words, hold, __local scratch)
double resident(SimLaunch& l) {
  SimBuffer& running = l.buffer(0);
  SimBuffer& peak = l.buffer(1);
  SimBuffer& sink = l.buffer(2);
  const size_t local_bytes = l.local_bytes();
  const uint32_t words = l.u32(3), hold = l.u32(4);
  const auto& c = l.config();
  if (local_bytes > c.local.bytes_per_work_group)
    throw DeviceError(fmt::format("sim: {} B of local memory exceeds the device's {} B per work-group",
                                  local_bytes, c.local.bytes_per_work_group));
  if (uint64_t{words} * 4 > local_bytes) throw DeviceError("sim: scheduling scratch past its allocation");
  const uint64_t wg = l.local().total() ? l.local().total() : std::min<uint64_t>(l.global().total(), 64);
  const uint64_t groups = (l.global().total() + wg - 1) / wg;
  const uint64_t at_once =
      std::min<uint64_t>(groups, resident_per_core(c, wg, local_bytes) * c.core.shader_cores);

  const uint32_t before = running.load<uint32_t>(0);
  peak.store<uint32_t>(0, std::max(peak.load<uint32_t>(0), before + static_cast<uint32_t>(at_once)));
  running.store<uint32_t>(0, before);  // every increment undone by its decrement
  uint32_t per_group = 1;
  if (words > 0) {
    // scratch[1 % words]: written by local ids 1 % words, + words, ...; the lowest stays.
    const uint64_t slot = 1 % words;
    per_group = (slot < wg ? static_cast<uint32_t>(slot) : 0u) + 1;
  }
  sink.store<uint32_t>(0, sink.load<uint32_t>(0) + per_group * static_cast<uint32_t>(groups));

  const double rounds = std::ceil(static_cast<double>(groups) / static_cast<double>(at_once));
  return rounds * (static_cast<double>(hold) + 2) * c.dram_latency_ns;
}

}  // namespace

void register_sim_family_scheduling(FamilyTable& table) {
  table.add({"scheduling", "resident", 0, resident});
}

}  // namespace gpuscope::sim
