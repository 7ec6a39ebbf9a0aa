// An inferred parameter of the device: a value with its interval, how sure
// we are, and the series it was read from.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope {

// A number, a yes/no answer, or a list (e.g. occupancy cliffs).
using FindingValue = std::variant<double, bool, std::vector<double>>;

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
};

inline double number(const Finding& f) {
  if (const auto* d = std::get_if<double>(&f.value)) return *d;
  if (const auto* b = std::get_if<bool>(&f.value)) return *b ? 1.0 : 0.0;
  return 0.0;
}

}  // namespace gpuscope
