// An inferred parameter of the device: a value with its interval, how sure
// we are, and the series it was read from.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope {

// A number, a yes/no answer, a list (e.g. occupancy cliffs), or a name out
// of a fixed set (graphics.tile.order: "row-major", ...).
using FindingValue = std::variant<double, bool, std::vector<double>, std::string>;

// How reports show a finding, from the finding catalogue
// (core/finding_catalogue.hpp), so that no printer reads meaning out of ids.
struct FindingDisplay {
  std::string name;    // "L2 capacity", "fp32 fma throughput"; the id where the catalogue lacks it
  std::string area;    // report section: "Memory hierarchy", ... "Other"
  int order = 0;       // rank within the area; reports list by it, then as the analysis emitted them
  std::string level;   // cache levels' findings only: the table row ("L1" ... "dram")
  std::string column;  // with `level`: "capacity", "latency" or "bandwidth"; else empty
  bool known = false;  // the id is in the catalogue

  bool operator==(const FindingDisplay&) const = default;
};

struct Finding {
  std::string id;  // contract id, e.g. "memory.L1.capacity_bytes"
  FindingValue value = 0.0;
  std::string unit;           // "B", "ns", "" for counts and booleans
  std::optional<double> low;  // interval bounds, where an interval makes sense
  std::optional<double> high;
  double confidence = 0;              // 0..1
  std::vector<std::string> evidence;  // ids of the series it came from
  std::string method;                 // how it was inferred, one sentence
  std::string note;                   // interpretation for a person, may be empty
  FindingDisplay display = {};        // not stored in results.json: filled from the catalogue on reading
};

// The finding with this id in `findings`, or null.
inline const Finding* find_finding(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}
inline Finding* find_finding(std::vector<Finding>& findings, const std::string& id) {
  for (Finding& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

inline double number(const Finding& f) {
  if (const auto* d = std::get_if<double>(&f.value)) return *d;
  if (const auto* b = std::get_if<bool>(&f.value)) return *b ? 1.0 : 0.0;
  return 0.0;
}

}  // namespace gpuscope
