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

struct Results {
  std::string tool_version;
  DeviceInfo device;
  std::vector<Series> series;
  std::vector<Finding> findings;
  std::vector<Skipped> skipped;
  // How the run was made: command line, start time, per-probe wall times.
  nlohmann::json run = nlohmann::json::object();

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
