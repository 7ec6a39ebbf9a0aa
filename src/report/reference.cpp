#include "report/reference.hpp"

#include "core/finding_catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string_view>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/printable.hpp"
#include "report/assets.hpp"
#include "report/results_json.hpp"

namespace gpuscope {

namespace {

using nlohmann::json;

// Reads one profile, naming the file and the JSON path of whatever is wrong.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}", origin_, path, what));
  }
  const json& member(const json& j, const std::string& path, const char* key) const {
    if (!j.is_object() || !j.contains(key)) fail(path, fmt::format("missing \"{}\"", key));
    return j.at(key);
  }
  std::string string(const json& j, const std::string& path, const char* key, bool required = true) const {
    if (!j.contains(key)) {
      if (required) fail(path, fmt::format("missing \"{}\"", key));
      return "";
    }
    const json& v = j.at(key);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return printable(v.get_ref<const std::string&>());
  }
  double finite(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, "expected a finite number");
    return d;
  }
  std::string kind(const json& j, const std::string& path) const {
    const std::string k = string(j, path, "kind");
    if (k != "spec" && k != "measurement") fail(path + ".kind", "expected \"spec\" or \"measurement\", got \"" + k + "\"");
    return k;
  }
  std::string source(const json& j, const std::string& path) const {
    const std::string s = string(j, path, "source");
    if (s.empty()) fail(path + ".source", "every value names its source");
    return s;
  }

 private:
  std::string origin_;
};

// The unit a contract id's suffix implies, or nullptr where the id does not
// say (counts, ratios, booleans, lists).
const char* unit_for_suffix(const std::string& id) {
  static const std::pair<std::string_view, const char*> kSuffixes[] = {
      {"_bytes", "B"}, {"_ns", "ns"}, {"_us", "us"}, {"_gbps", "GB/s"}, {"_gops", "Gop/s"}, {"_mhz", "MHz"},
  };
  for (const auto& [suffix, unit] : kSuffixes)
    if (id.ends_with(suffix)) return unit;
  return nullptr;
}

ReferenceValue read_value(const Reader& rd, const json& j, const std::string& path) {
  static const std::regex kId(R"([a-z][a-z0-9_]*(\.[A-Za-z0-9_]+)+)");
  ReferenceValue v;
  Finding& f = v.finding;
  f.id = rd.string(j, path, "id");
  f.display = describe_finding(f.id);
  if (!std::regex_match(f.id, kId)) rd.fail(path + ".id", "\"" + f.id + "\" is not a finding id (area.what[_unit])");
  f.unit = rd.string(j, path, "unit");
  if (const char* want = unit_for_suffix(f.id); want && f.unit != want)
    rd.fail(path + ".unit", fmt::format("{} is in \"{}\", not \"{}\"", f.id, want, f.unit));
  const json& value = rd.member(j, path, "value");
  if (value.is_boolean()) {
    f.value = value.get<bool>();
  } else if (value.is_array()) {
    std::vector<double> list;
    for (size_t i = 0; i < value.size(); ++i) list.push_back(rd.finite(value[i], fmt::format("{}.value[{}]", path, i)));
    f.value = list;
  } else {
    f.value = rd.finite(value, path + ".value");
  }
  if (j.contains("low")) f.low = rd.finite(j["low"], path + ".low");
  if (j.contains("high")) f.high = rd.finite(j["high"], path + ".high");
  if ((f.low || f.high) && !std::holds_alternative<double>(f.value))
    rd.fail(path, "an interval needs a numeric value");
  const double x = number(f);
  if ((f.low && *f.low > x) || (f.high && *f.high < x))
    rd.fail(path, fmt::format("value {} lies outside [{}, {}]", x, f.low.value_or(x), f.high.value_or(x)));
  if (j.contains("evidence")) {
    const json& e = j["evidence"];
    if (!e.is_array()) rd.fail(path + ".evidence", "expected a list of series ids");
    for (const auto& s : e) {
      if (!s.is_string()) rd.fail(path + ".evidence", "expected a list of series ids");
      f.evidence.push_back(s.get<std::string>());
    }
  }
  v.kind = rd.kind(j, path);
  v.source = rd.source(j, path);
  f.confidence = 1.0;
  f.method = v.kind + ": " + v.source;
  return v;
}

ReferenceSeries read_series(const Reader& rd, const json& j, const std::string& path) {
  ReferenceSeries s;
  s.id = rd.string(j, path, "id");
  for (auto [key, axis] : {std::pair{"x", &s.x}, std::pair{"y", &s.y}}) {
    const json& a = rd.member(j, path, key);
    axis->name = rd.string(a, path + "." + key, "name");
    axis->unit = rd.string(a, path + "." + key, "unit");
  }
  const json& points = rd.member(j, path, "points");
  if (!points.is_array() || points.empty()) rd.fail(path + ".points", "expected a non-empty list");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string p = fmt::format("{}.points[{}]", path, i);
    ReferencePoint pt;
    pt.x = rd.finite(rd.member(points[i], p, "x"), p + ".x");
    pt.y = rd.finite(rd.member(points[i], p, "y"), p + ".y");
    pt.kind = rd.kind(points[i], p);
    pt.source = rd.source(points[i], p);
    s.points.push_back(pt);
  }
  std::sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
  return s;
}

// "Mali-G52" and "mali g52" are one name.
std::string folded(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

ReferenceProfile reference_from_json(const json& j, const std::string& origin) {
  const Reader rd(origin);
  if (!j.is_object()) rd.fail("(top)", "expected an object");
  const std::string schema = rd.string(j, "(top)", "schema");
  if (schema != kReferenceSchema) rd.fail("schema", fmt::format("expected \"{}\", got \"{}\"", kReferenceSchema, schema));
  ReferenceProfile p;
  p.name = rd.string(j, "(top)", "name");
  if (p.name.empty()) rd.fail("name", "empty");
  if (j.contains("aliases")) {
    for (size_t i = 0; i < j["aliases"].size(); ++i) {
      if (!j["aliases"][i].is_string()) rd.fail(fmt::format("aliases[{}]", i), "expected a string");
      p.aliases.push_back(j["aliases"][i].get<std::string>());
    }
  }
  p.about = rd.string(j, "(top)", "about", false);
  json device = rd.member(j, "(top)", "device");
  if (!device.is_object()) rd.fail("device", "expected an object");
  device["id"] = "reference:" + p.name;
  if (!device.contains("api")) device["api"] = "";
  if (!device.contains("vendor")) device["vendor"] = "";
  if (!device.contains("type")) device["type"] = "gpu";
  if (!device.contains("name")) device["name"] = p.name;
  try {
    p.device = device_from_json(device);
  } catch (const UsageError& e) {
    rd.fail("device", e.what());
  }
  const json& values = rd.member(j, "(top)", "values");
  if (!values.is_array() || values.empty()) rd.fail("values", "expected a non-empty list");
  for (size_t i = 0; i < values.size(); ++i) {
    ReferenceValue v = read_value(rd, values[i], fmt::format("values[{}]", i));
    if (p.find_value(v.finding.id)) rd.fail(fmt::format("values[{}]", i), v.finding.id + " appears twice");
    p.values.push_back(std::move(v));
  }
  if (j.contains("series")) {
    if (!j["series"].is_array()) rd.fail("series", "expected a list");
    for (size_t i = 0; i < j["series"].size(); ++i)
      p.series.push_back(read_series(rd, j["series"][i], fmt::format("series[{}]", i)));
  }
  return p;
}

const std::vector<ReferenceProfile>& known_references() {
  static const std::vector<ReferenceProfile> profiles = [] {
    std::vector<ReferenceProfile> out;
    for (const auto& a : embedded_assets()) {
      if (!a.name.starts_with("reference/")) continue;
      try {
        out.push_back(reference_from_json(json::parse(a.text), std::string(a.name)));
      } catch (const std::exception& e) {
        throw std::logic_error(std::string("embedded reference profile is invalid: ") + e.what());
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return profiles;
}

ReferenceProfile find_reference(const std::string& name_or_path) {
  const std::string want = folded(name_or_path);
  std::string names;
  for (const auto& p : known_references()) {
    if (folded(p.name) == want) return p;
    for (const auto& alias : p.aliases)
      if (folded(alias) == want) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  // Anything on disk by that name (symlink_status: a link that loops or
  // dangles is there too) is read as a profile, so that a directory, a
  // device, a FIFO or a link loop is refused as what it is, not as a name.
  std::error_code ec;
  const bool on_disk = std::filesystem::symlink_status(name_or_path, ec).type() != std::filesystem::file_type::not_found &&
                       !ec;
  if (on_disk || name_or_path.ends_with(".json")) {
    // A profile is results-sized at most, and read under the same bounds.
    const std::string text = read_input_file(name_or_path, "reference profile", kResultsLimits.max_bytes);
    json j;
    try {
      j = parse_json_input(text, kResultsLimits.max_depth);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: not valid JSON: {}", name_or_path, e.what()));
    }
    return reference_from_json(j, name_or_path);
  }
  throw UsageError(
      fmt::format("unknown reference '{}'; known devices: {} (or a reference profile .json file)", name_or_path, names));
}

Results reference_as_results(const ReferenceProfile& p) {
  Results r;
  r.device = p.device;
  for (const auto& v : p.values) r.findings.push_back(v.finding);
  for (const auto& rs : p.series) {
    Series s;
    s.id = rs.id;
    s.probe = "reference";
    s.x = rs.x;
    s.y = rs.y;
    s.meta["sources"] = json::array();
    for (const auto& pt : rs.points) {
      s.points.push_back({pt.x, pt.y, {}});
      s.meta["sources"].push_back(pt.kind + ": " + pt.source);
    }
    r.series.push_back(std::move(s));
  }
  r.run = {{"reference", true}, {"about", p.about}};
  return r;
}

}  // namespace gpuscope
