// Reference profiles of known devices: published figures (vendor specs and
// other people's measurements) as data, from data/reference/*.json (schema
// "gpuscope.reference/1"), each value with its source and whether it is a
// spec or a measurement. Reports put them beside a run (--compare NAME).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/results.hpp"

namespace gpuscope {

inline constexpr const char* kReferenceSchema = "gpuscope.reference/1";

struct ReferenceValue {
  Finding finding;     // id, value, unit, low/high, evidence (series it would be read from)
  std::string kind;    // "spec" or "measurement"
  std::string source;  // who says so, where
};

struct ReferencePoint {
  double x = 0;
  double y = 0;
  std::string kind;
  std::string source;
};

struct ReferenceSeries {
  std::string id;  // the gpuscope series these points belong beside, e.g. "latency.global"
  Axis x;
  Axis y;
  std::vector<ReferencePoint> points;
};

struct ReferenceProfile {
  std::string name;                  // what --compare takes, e.g. "H100"
  std::vector<std::string> aliases;  // other names --compare accepts
  DeviceInfo device;
  std::string about;  // how the profile was built
  std::vector<ReferenceValue> values;
  std::vector<ReferenceSeries> series;

  const ReferenceValue* find_value(const std::string& id) const {
    for (const auto& v : values)
      if (v.finding.id == id) return &v;
    return nullptr;
  }
};

// Validates as it reads: schema, a name, every value with a contract-shaped
// id, a number/boolean/list value, a unit that agrees with the id's suffix
// (_bytes: "B", _ns: "ns", _gbps: "GB/s", ...), low <= value <= high, kind
// "spec" or "measurement", a source; every point finite with a source.
// Throws UsageError naming `origin` and the offending path.
ReferenceProfile reference_from_json(const nlohmann::json& j, const std::string& origin);

// The profiles compiled into the binary, sorted by name. Each was validated
// on first use; an invalid embedded file throws std::logic_error.
const std::vector<ReferenceProfile>& known_references();

// A known profile by name or alias (case, blanks and dashes ignored:
// "h100", "Mali G52"), or a profile file by path. Throws UsageError naming the
// known profiles.
ReferenceProfile find_reference(const std::string& name_or_path);

// The profile as a Results, so that every reporter can draw it like a run:
// values become findings (method: kind and source), points become series.
// device.id is "reference:NAME" and run["reference"] is true.
Results reference_as_results(const ReferenceProfile& p);

}  // namespace gpuscope
