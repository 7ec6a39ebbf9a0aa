// The compute probes' launch shape.
#include "probes/compute/compute_probe.hpp"

#include <algorithm>

namespace gpuscope {

const std::map<std::string, int64_t>& compute_plan_limits() {
  // Past these a build takes the driver minutes or a work-group exceeds
  // every device's limit.
  static const std::map<std::string, int64_t> limits = {
      {"chains", 64}, {"unroll", 1024}, {"unroll_slow", 256}, {"items_per_cu", 1 << 16}, {"local", 1024}};
  return limits;
}

namespace compute_probe {

// --compute-plan overrides (ProbeOptions::compute_plan), to find out why a
// rate falls short (instruction-level parallelism, occupancy, loop
// overhead) without rebuilding; run_options checked keys and ranges.
static void apply_plan_override(Plan& plan, size_t cus, const std::map<std::string, int64_t>& override) {
  for (const auto& [k, v] : override) {
    if (k == "chains") plan.chains = static_cast<int>(v);
    if (k == "unroll") plan.unroll = static_cast<int>(v);
    if (k == "unroll_slow") plan.unroll_slow = static_cast<int>(v);
    if (k == "items_per_cu") plan.global = cus * static_cast<size_t>(v);
    if (k == "local") plan.local = static_cast<size_t>(v);
  }
  plan.global = std::max(plan.local, plan.global / plan.local * plan.local);
}

Plan make_plan(const DeviceInfo& info, bool quick, const std::map<std::string, int64_t>& override) {
  Plan plan;
  const bool cpu = info.type == "cpu";
  // CPUs compile these unrolled bodies slowly (PoCL, two cores in CI) and
  // need no occupancy: smaller bodies there. GPUs get 2048 work-items per
  // compute unit: a full NVIDIA SM.
  plan.chains = cpu ? 4 : 8;
  plan.unroll = cpu ? (quick ? 4 : 8) : 32;
  plan.lat_unroll = cpu ? 16 : 64;
  const size_t cus = std::max<uint32_t>(info.compute_units, 1);
  plan.unroll_slow = cpu ? 2 : 4;
  plan.lat_unroll_slow = cpu ? 4 : 16;
  plan.local = cpu ? 16 : 256;
  plan.global = cpu ? cus * 64 : cus * 2048;
  apply_plan_override(plan, cus, override);
  plan.pattern_items = std::min<size_t>(plan.global, 512);
  return plan;
}

}  // namespace compute_probe
}  // namespace gpuscope
