#include "app/run_options.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace gpuscope {

namespace {

double in_range(const char* option, double v, double lo, double hi, const char* unit) {
  if (!std::isfinite(v) || v < lo || v > hi)
    throw UsageError(fmt::format("{} {} is outside [{:g}, {:g}]{}", option, v, lo, hi, unit));
  return v;
}

std::vector<const ProbeDef*> probes_named(const std::string& list) {
  if (list.empty())
    throw UsageError("--probes is empty; give probe names separated by commas, or leave it out");
  std::vector<const ProbeDef*> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string name =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty())
      throw UsageError(
          fmt::format("--probes '{}' has an empty name; give probe names separated by commas", list));
    if (!seen.insert(name).second) throw UsageError(fmt::format("--probes names '{}' twice", name));
    out.push_back(&find_probe(name));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

RunPlan plan_run(const RunArgs& a) {
  RunPlan p;
  if (a.device) {
    if (a.device->empty())
      throw UsageError("--device is empty; give an ID from `gpuscope list`, or leave it out for the default");
    p.device = *a.device;
  }
  if (a.probes) {
    p.probes = probes_named(*a.probes);
  } else {
    for (const auto& def : probe_registry()) p.probes.push_back(&def);
  }
  if (a.out.empty()) throw UsageError("--out is empty; give a directory");
  p.out = a.out;
  p.quick = a.quick;
  p.quiet = a.quiet;
  p.max_launch_ms = in_range("--max-launch-ms", a.max_launch_ms, kMinLaunchMs, kMaxLaunchMs, " ms");
  p.budget_scale = in_range("--budget-scale", a.budget_scale, kMinBudgetScale, kMaxBudgetScale, "");
  if (a.sustain_s) p.sustain_s = in_range("--sustain-s", *a.sustain_s, kMinSustainS, kMaxSustainS, " s");
  p.sysfs_root = a.sysfs_root;
  return p;
}

}  // namespace gpuscope
