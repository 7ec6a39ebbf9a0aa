#include "core/error.hpp"
#include "probes/probe.hpp"

namespace gpuscope {

const std::vector<ProbeDef>& probe_registry() {
  static const std::vector<ProbeDef> probes = {
      {"latency", "dependent pointer chase over growing footprints: cache levels, sizes, latencies", 20.0,
       run_latency_probe},
      {"compute", "arithmetic throughput per type and op, independent chains: rates, ratios to fp32 FMA, dual issue",
       9.0, run_compute_probe},
      {"oplatency", "dependent chains per type and op: latency in ns and cycles", 5.0, run_oplatency_probe},
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
