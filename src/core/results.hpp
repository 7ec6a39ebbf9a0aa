// The whole outcome of a run: what results.json holds (schema in docs/results-format.md).
#pragma once

#include "core/device_info.hpp"
#include "core/finding.hpp"
#include "core/series.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope {

inline constexpr const char* kResultsSchema = "gpuscope.results/1";

struct Skipped {
  std::string probe;
  std::string reason;
};

// A finding the run's series should have given but did not, and why (a
// search that could not reach the limit, an experiment that did not cover
// the level, a curve that does not decide it).
struct Unfound {
  std::string id;      // the finding id it would have had: "memory.L2.shared_by_cus"
  std::string reason;  // for a person
  std::vector<std::string> evidence;  // the series looked at
};

struct Results {
  std::string tool_version;
  DeviceInfo device;
  std::vector<Series> series;
  std::vector<Finding> findings;
  std::vector<Skipped> skipped;
  std::vector<Unfound> unfound;  // set by analysis beside findings
  // How the run was made: command line, start time, per-probe wall times.
  nlohmann::json run = nlohmann::json::object();
  // The closed loop (model/closed_loop.hpp): the model written beside the
  // results, its contradictions, and the replay of the run on it.
  nlohmann::json model = nlohmann::json::object();

  const Series* find_series(const std::string& id) const {
    for (const auto& s : series)
      if (s.id == id) return &s;
    return nullptr;
  }
  const Finding* find_finding(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

}  // namespace gpuscope
