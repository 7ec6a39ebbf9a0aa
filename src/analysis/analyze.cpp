#include "analysis/analyze.hpp"

#include "analysis/cache_hierarchy.hpp"
#include "analysis/compute.hpp"

namespace gpuscope::analysis {

namespace {

Finding reported(const std::string& id, double value, const std::string& unit, const std::string& note) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.confidence = 1.0;
  f.method = "reported by the driver";
  f.note = note;
  return f;
}

}  // namespace

std::vector<Finding> analyze_all(const Results& r) {
  std::vector<Finding> out;
  if (r.device.compute_units) out.push_back(reported("device.compute_units", r.device.compute_units, "", ""));
  if (r.device.clock_mhz)
    out.push_back(reported("device.clock_mhz", r.device.clock_mhz, "MHz",
                           "the driver's figure (often the maximum boost clock), not a measurement"));
  if (const Series* s = r.find_series("latency.global")) {
    auto found = hierarchy_findings(infer_cache_hierarchy(*s), s->id);
    // A caveat the probe recorded about how the curve was measured belongs
    // with the count of levels, the first line a person reads.
    if (s->meta.contains("caveat") && !found.empty()) {
      std::string& note = found.front().note;
      note = s->meta["caveat"].get<std::string>() + (note.empty() ? "" : " " + note);
    }
    out.insert(out.end(), found.begin(), found.end());
  }
  {
    auto found = compute_findings(r);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace gpuscope::analysis
