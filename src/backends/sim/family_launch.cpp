// Sim family `launch` (src/kernels/opencl/launch.cl): `empty(__global uint* sink, uint value)`
// stores `value` from work-item 0 so the host can check the launch ran.
//
// Time: the kernel's own execution, start to end: one wave per work-group
// slot, so a launch wider than the device's resident work-groups takes more
// rounds of a fixed per-round cost. The launch machinery before the kernel
// starts (launch.dispatch_us, launch_overhead_us) belongs to the timestamps
// and host time of SimDevice::launch_batch (sim_device_launch.cpp).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

double empty(SimLaunch& l) {
  SimBuffer& sink = l.buffer(0);
  const uint32_t value = l.u32(1);
  if (l.global().total() > 0) sink.store<uint32_t>(0, value);
  const auto& c = l.config();
  const double group = l.local().total() ? static_cast<double>(l.local().total()) : 64.0;
  const double groups = std::ceil(static_cast<double>(l.global().total()) / group);
  const double resident = static_cast<double>(c.core.shader_cores) * c.core.workgroups_per_core;
  const double rounds = std::max(1.0, std::ceil(groups / resident));
  // A round: issue, one store and retire of a wave: of the order of a DRAM
  // write's latency on these GPUs.
  return rounds * c.dram_latency_ns;
}

}  // namespace

void register_sim_family_launch(FamilyTable& table) { table.add({"launch", "empty", 0, empty}); }

}  // namespace gpuscope::sim
