#include "core/error.hpp"
#include "probes/probe.hpp"

namespace gpuscope {

const std::vector<ProbeDef>& probe_registry() {
  static const std::vector<ProbeDef> probes = {
      {"latency", "dependent pointer chase over growing footprints: cache levels, sizes, latencies", 20.0,
       run_latency_probe},
      {"divergence",
       "branch sides against agreeing block size, waves switched on by stride: wave width, scheduler "
       "partitions",
       2.0, run_divergence_probe},
      {"occupancy",
       "latency-bound chase against work-groups, live registers and local memory: waves per unit, cliffs",
       5.5, run_occupancy_probe},
      {"icache",
       "issue-bound adds against loop-body size, binary size against adds: instruction cache, code bytes",
       3.5, run_icache_probe},
  };
  return probes;
}

double planned_budget_s(const ProbeDef& def, const ProbeOptions& options, const DeviceInfo& device) {
  return def.budget_s * options.budget_scale * (options.quick ? 0.4 : 1.0) *
         (device.type == "cpu" ? 2.5 : 1.0);
}

const ProbeDef& find_probe(const std::string& name) {
  std::string valid;
  for (const auto& p : probe_registry()) {
    if (p.name == name) return p;
    valid += (valid.empty() ? "" : ", ") + p.name;
  }
  throw UsageError("unknown probe '" + name + "'; valid probes: " + valid);
}

}  // namespace gpuscope
