#include "report/results_json.hpp"

#include "core/atomic_file.hpp"
#include "core/finding_catalogue.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/printable.hpp"

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <tuple>

namespace gpuscope {

using nlohmann::json;

namespace {

// ---- Writing ---------------------------------------------------------------

json axis_to_json(const Axis& a) { return {{"name", a.name}, {"unit", a.unit}}; }

json point_to_json(const Point& p) { return {{"x", p.x}, {"y", p.y}, {"samples", p.samples}}; }

// A long series whose point i is at x = i with its y as its one sample (a
// raster trace: ticket i, its pixel) is written as "points_y", its y values
// alone: an object per point would make a 2^17-ticket trace 15 MB.
constexpr size_t kDensePoints = 4096;

bool dense(const Series& s) {
  if (s.points.size() <= kDensePoints) return false;
  // A y that is not a number is written null either way, and read back as NaN.
  const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    if (p.x != static_cast<double>(i) || p.samples.size() != 1 || !same(p.samples[0], p.y)) return false;
  }
  return true;
}

json series_to_json(const Series& s) {
  json j = {{"id", s.id}, {"probe", s.probe}, {"x", axis_to_json(s.x)}, {"y", axis_to_json(s.y)}};
  if (dense(s)) {
    json ys = json::array();
    for (const auto& p : s.points) ys.push_back(p.y);
    j["points_y"] = std::move(ys);
  } else {
    json points = json::array();
    for (const auto& p : s.points) points.push_back(point_to_json(p));
    j["points"] = std::move(points);
  }
  j["meta"] = s.meta;
  return j;
}

json finding_to_json(const Finding& f) {
  json j = {{"id", f.id}};
  j["value"] = std::visit([](const auto& v) { return json(v); }, f.value);
  j["unit"] = f.unit;
  if (f.low) j["low"] = *f.low;
  if (f.high) j["high"] = *f.high;
  j["confidence"] = f.confidence;
  j["evidence"] = f.evidence;
  j["method"] = f.method;
  if (!f.note.empty()) j["note"] = f.note;
  return j;
}

// ---- Reading ---------------------------------------------------------------
// Every reader takes the JSON path of the value it reads, so that an error
// names the exact place: "series[3].points[2].x: expected a number, got string".

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw UsageError((path.empty() ? std::string("top level") : path) + ": " + problem);
}

[[noreturn]] void fail_type(const std::string& path, const char* expected, const json& got) {
  fail(path, fmt::format("expected {}, got {}", expected, got.type_name()));
}

std::string element_path(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

// Strings are made printable: they reach terminals and reports.
void read(const json& j, const std::string& path, std::string& out) {
  if (!j.is_string()) fail_type(path, "a string", j);
  out = printable(j.get_ref<const std::string&>());
}

void read(const json& j, const std::string& path, bool& out) {
  if (!j.is_boolean()) fail_type(path, "a boolean", j);
  out = j.get<bool>();
}

// null is how nlohmann writes NaN and infinities, so it reads back as NaN
// rather than rejecting a file gpuscope wrote itself.
void read(const json& j, const std::string& path, double& out) {
  if (j.is_null()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  if (!j.is_number()) fail_type(path, "a number", j);
  out = j.get<double>();
}

template <class UInt>
requires std::is_unsigned_v<UInt>
void read(const json& j, const std::string& path, UInt& out) {
  const bool non_negative_integer =
      j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0);
  if (!non_negative_integer) fail_type(path, "a non-negative integer", j);
  const auto v = j.get<uint64_t>();
  if (v > std::numeric_limits<UInt>::max()) fail(path, fmt::format("{} is out of range", v));
  out = static_cast<UInt>(v);
}

void read(const json& j, const std::string& path, MatrixShape& out);  // below, with the field readers

template <class T>
void read(const json& j, const std::string& path, std::vector<T>& out) {
  if (!j.is_array()) fail_type(path, "an array", j);
  out.assign(j.size(), T{});
  for (size_t i = 0; i < j.size(); ++i) read(j[i], element_path(path, i), out[i]);
}

// Free-form objects (series meta, vendor_info, run) are kept as they are,
// their strings made printable.
void read_object(const json& j, const std::string& path, json& out) {
  if (!j.is_object()) fail_type(path, "an object", j);
  out = printable_json(j);
}

// Field access on one JSON object, with paths for the error messages.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail_type(path_, "an object", j_);
  }

  std::string path_of(const char* key) const { return json_key_path(path_, key); }

  const json& required(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) fail(path_of(key), "required key is missing");
    return *it;
  }

  const json* optional(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }

  template <class T>
  void get(const char* key, T& out) const {
    read(required(key), path_of(key), out);
  }

  // Leaves `out` at its default when the key is absent.
  template <class T>
  void get_optional(const char* key, T& out) const {
    if (const json* v = optional(key)) read(*v, path_of(key), out);
  }

 private:
  const json& j_;
  std::string path_;
};

Axis axis_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Axis a;
  o.get("name", a.name);
  o.get("unit", a.unit);
  return a;
}

Point point_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Point p;
  o.get("x", p.x);
  o.get("y", p.y);
  o.get("samples", p.samples);
  return p;
}

// The series meta keys the analysis and the reports read, and the JSON type
// each must have. Meta is otherwise free-form; these are checked here, where
// every command reads a results file, so that analyze, report and compare
// accept and refuse the same files with one message naming the key.
enum class MetaType { number, string, array };
constexpr std::pair<const char*, MetaType> kMetaTypes[] = {
    {"active_waves_per_group", MetaType::number}, {"bytes_per_cell_update", MetaType::number},
    {"calibration_deviation_us", MetaType::number}, {"compute_units", MetaType::number},
    {"cycles_per_step", MetaType::number}, {"element_bytes", MetaType::number},
    {"flop_per_op", MetaType::number}, {"footprint_bytes", MetaType::number},
    {"group_size", MetaType::number}, {"groups", MetaType::number},
    {"launch_ms_planned", MetaType::number}, {"line_bytes", MetaType::number},
    {"machine_bytes_per_op", MetaType::number}, {"region_bytes", MetaType::number},
    {"reported_bytes", MetaType::number}, {"required_subgroup_size", MetaType::number},
    {"stride_bytes", MetaType::number}, {"texture_bytes", MetaType::number},
    {"texture_first_level_bytes", MetaType::number}, {"wave_width_assumed", MetaType::number},
    {"rects_drawn", MetaType::number}, {"binary_format", MetaType::string},
    {"caveat", MetaType::string}, {"chase_method", MetaType::string},
    {"image", MetaType::string}, {"machine_bytes_source", MetaType::string},
    {"method", MetaType::string}, {"note", MetaType::string},
    {"refinement", MetaType::string}, {"sharing_not_run", MetaType::string},
    {"sharing_skipped", MetaType::string}, {"cycles_per_op", MetaType::array},
    {"detail", MetaType::array}, {"sources", MetaType::array},
};

void check_meta_types(const json& meta, const std::string& meta_path, const std::string& series_id) {
  for (const auto& [key, type] : kMetaTypes) {
    const auto it = meta.find(key);
    if (it == meta.end()) continue;
    const bool ok = type == MetaType::number   ? it->is_number()
                    : type == MetaType::string ? it->is_string()
                                               : it->is_array();
    if (!ok)
      fail(json_key_path(meta_path, key),
           fmt::format("expected {}, got {} (series '{}')",
                       type == MetaType::number   ? "a number"
                       : type == MetaType::string ? "a string"
                                                  : "an array",
                       it->type_name(), printable(series_id)));
  }
}

Series series_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Series s;
  o.get("id", s.id);
  o.get("probe", s.probe);
  s.x = axis_from_json(o.required("x"), o.path_of("x"));
  s.y = axis_from_json(o.required("y"), o.path_of("y"));
  if (const json* ys = o.optional("points_y")) {
    std::vector<double> y;
    read(*ys, o.path_of("points_y"), y);
    s.points.reserve(y.size());
    for (size_t i = 0; i < y.size(); ++i) s.points.push_back({static_cast<double>(i), y[i], {y[i]}});
  } else {
    const json& points = o.required("points");
    const std::string points_path = o.path_of("points");
    if (!points.is_array()) fail_type(points_path, "an array", points);
    for (size_t i = 0; i < points.size(); ++i)
      s.points.push_back(point_from_json(points[i], element_path(points_path, i)));
  }
  if (const json* meta = o.optional("meta")) {
    read_object(*meta, o.path_of("meta"), s.meta);
    check_meta_types(*meta, o.path_of("meta"), s.id);
  }
  return s;
}

FindingValue finding_value_from_json(const json& j, const std::string& path) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_string()) {
    std::string name;
    read(j, path, name);
    return name;
  }
  if (j.is_array()) {
    std::vector<double> list;
    read(j, path, list);
    return list;
  }
  if (j.is_number() || j.is_null()) {
    double v = 0;
    read(j, path, v);
    return v;
  }
  fail_type(path, "a number, a boolean, a string or an array of numbers", j);
}

Finding finding_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Finding f;
  o.get("id", f.id);
  f.value = finding_value_from_json(o.required("value"), o.path_of("value"));
  o.get("unit", f.unit);
  if (const json* low = o.optional("low")) read(*low, o.path_of("low"), f.low.emplace());
  if (const json* high = o.optional("high")) read(*high, o.path_of("high"), f.high.emplace());
  o.get("confidence", f.confidence);
  o.get("evidence", f.evidence);
  o.get("method", f.method);
  o.get_optional("note", f.note);
  f.display = describe_finding(f.id);
  return f;
}

Skipped skipped_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Skipped s;
  o.get("probe", s.probe);
  o.get("reason", s.reason);
  return s;
}

Unfound unfound_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  Unfound u;
  o.get("id", u.id);
  o.get("reason", u.reason);
  o.get("evidence", u.evidence);
  return u;
}

template <class T, class ReadElement>
std::vector<T> array_from_json(const ObjectReader& o, const char* key, ReadElement read_element) {
  const json& a = o.required(key);
  const std::string path = o.path_of(key);
  if (!a.is_array()) fail_type(path, "an array", a);
  std::vector<T> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) out.push_back(read_element(a[i], element_path(path, i)));
  return out;
}

DriverFact driver_fact_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  DriverFact f;
  o.get("key", f.key);
  f.value = o.required("value");
  if (!f.value.is_number() && !f.value.is_string()) fail_type(o.path_of("value"), "a number or a string", f.value);
  // A driver's string reaches every report, as every other string read here does.
  f.value = printable_json(f.value);
  o.get_optional("unit", f.unit);
  o.get("source", f.source);
  return f;
}

DriverSnapshot driver_snapshot_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  DriverSnapshot s;
  o.get("when", s.when);
  o.get("driver", s.driver);
  o.get_optional("notes", s.notes);
  s.facts = array_from_json<DriverFact>(o, "facts", driver_fact_from_json);
  return s;
}

MatrixShape matrix_shape_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  MatrixShape m;
  o.get("a", m.a);
  o.get("b", m.b);
  o.get("c", m.c);
  o.get("result", m.result);
  o.get("m", m.m);
  o.get("n", m.n);
  o.get("k", m.k);
  o.get_optional("saturating", m.saturating);
  return m;
}

void read(const json& j, const std::string& path, MatrixShape& out) { out = matrix_shape_from_json(j, path); }

json matrix_shape_to_json(const MatrixShape& m) {
  return {{"a", m.a}, {"b", m.b}, {"c", m.c}, {"result", m.result},
          {"m", m.m}, {"n", m.n}, {"k", m.k}, {"saturating", m.saturating}};
}

// The JSON form of one feature's value: as nlohmann writes it, but for the
// matrix shapes, which are objects of our own.
template <class T>
json feature_value_to_json(const T& v) {
  return json(v);
}

json feature_value_to_json(const std::vector<MatrixShape>& shapes) {
  json out = json::array();
  for (const auto& m : shapes) out.push_back(matrix_shape_to_json(m));
  return out;
}

// One DeviceFeatures member and its key in results.json.
template <class T>
struct FeatureField {
  const char* key;
  T DeviceFeatures::*member;
};

template <class T>
constexpr FeatureField<T> feature(const char* key, T DeviceFeatures::*member) {
  return {key, member};
}

// Every DeviceFeatures member, once: reading and writing both walk this
// table, so a new feature is one row here (and its line in
// docs/results-format.md). Every key is optional when read: a file written
// before a feature existed leaves it at its default.
constexpr std::tuple kFeatureFields{
    feature("fp64", &DeviceFeatures::fp64),
    feature("fp16", &DeviceFeatures::fp16),
    feature("int64_atomics", &DeviceFeatures::int64_atomics),
    feature("integer_dot_product", &DeviceFeatures::integer_dot_product),
    feature("images", &DeviceFeatures::images),
    feature("host_mapping", &DeviceFeatures::host_mapping),
    feature("shared_virtual_memory", &DeviceFeatures::shared_virtual_memory),
    feature("subgroup_sizes", &DeviceFeatures::subgroup_sizes),
    feature("subgroup_size_control", &DeviceFeatures::subgroup_size_control),
    feature("inline_asm", &DeviceFeatures::inline_asm),
    feature("isa_version", &DeviceFeatures::isa_version),
    feature("cycle_counter", &DeviceFeatures::cycle_counter),
    feature("instruction_bytes", &DeviceFeatures::instruction_bytes),
    feature("matrix_shapes", &DeviceFeatures::matrix_shapes),
    feature("max_loop_trips", &DeviceFeatures::max_loop_trips),
};

DeviceFeatures features_from_json(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  DeviceFeatures f;
  std::apply([&](const auto&... field) { (o.get_optional(field.key, f.*field.member), ...); },
             kFeatureFields);
  return f;
}

json features_to_json(const DeviceFeatures& f) {
  json j = json::object();
  std::apply([&](const auto&... field) { ((j[field.key] = feature_value_to_json(f.*field.member)), ...); },
             kFeatureFields);
  return j;
}

DeviceInfo device_from_json_at(const json& j, const std::string& path) {
  const ObjectReader o(j, path);
  DeviceInfo d;
  // Enough to tell which device it was; the rest keeps its default when absent.
  o.get("id", d.id);
  o.get("name", d.name);
  o.get("vendor", d.vendor);
  o.get("type", d.type);
  o.get("api", d.api);
  o.get_optional("driver_version", d.driver_version);
  o.get_optional("platform", d.platform);
  o.get_optional("uuid", d.uuid);
  o.get_optional("pci_address", d.pci_address);
  o.get_optional("compute_units", d.compute_units);
  o.get_optional("clock_mhz", d.clock_mhz);
  o.get_optional("global_mem_bytes", d.global_mem_bytes);
  o.get_optional("max_alloc_bytes", d.max_alloc_bytes);
  o.get_optional("local_mem_bytes", d.local_mem_bytes);
  o.get_optional("local_mem_dedicated", d.local_mem_dedicated);
  o.get_optional("global_cache_bytes", d.global_cache_bytes);
  o.get_optional("global_cache_line_bytes", d.global_cache_line_bytes);
  o.get_optional("address_bits", d.address_bits);
  o.get_optional("max_work_group_size", d.max_work_group_size);
  o.get_optional("profiling", d.profiling);
  o.get_optional("extensions", d.extensions);
  if (const json* v = o.optional("features")) d.features = features_from_json(*v, o.path_of("features"));
  if (const json* v = o.optional("vendor_info")) read_object(*v, o.path_of("vendor_info"), d.vendor_info);
  if (o.optional("driver")) d.driver = array_from_json<DriverSnapshot>(o, "driver", driver_snapshot_from_json);
  return d;
}

}  // namespace

nlohmann::json driver_snapshot_to_json(const DriverSnapshot& s) {
  json facts = json::array();
  for (const auto& f : s.facts)
    facts.push_back({{"key", f.key}, {"value", f.value}, {"unit", f.unit}, {"source", f.source}});
  return {{"when", s.when}, {"driver", s.driver}, {"facts", std::move(facts)}, {"notes", s.notes}};
}

nlohmann::json device_to_json(const DeviceInfo& d) {
  json driver = json::array();
  for (const auto& s : d.driver) driver.push_back(driver_snapshot_to_json(s));
  return {{"id", d.id},
          {"name", d.name},
          {"vendor", d.vendor},
          {"type", d.type},
          {"api", d.api},
          {"driver_version", d.driver_version},
          {"platform", d.platform},
          {"uuid", d.uuid},
          {"pci_address", d.pci_address},
          {"compute_units", d.compute_units},
          {"clock_mhz", d.clock_mhz},
          {"global_mem_bytes", d.global_mem_bytes},
          {"max_alloc_bytes", d.max_alloc_bytes},
          {"local_mem_bytes", d.local_mem_bytes},
          {"local_mem_dedicated", d.local_mem_dedicated},
          {"global_cache_bytes", d.global_cache_bytes},
          {"global_cache_line_bytes", d.global_cache_line_bytes},
          {"address_bits", d.address_bits},
          {"max_work_group_size", d.max_work_group_size},
          {"profiling", d.profiling},
          {"extensions", d.extensions},
          {"features", features_to_json(d.features)},
          {"vendor_info", d.vendor_info},
          {"driver", std::move(driver)}};
}

DeviceInfo device_from_json(const nlohmann::json& j) { return device_from_json_at(j, "device"); }

nlohmann::json to_json(const Results& r) {
  json series = json::array();
  for (const auto& s : r.series) series.push_back(series_to_json(s));
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(finding_to_json(f));
  json skipped = json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"probe", s.probe}, {"reason", s.reason}});
  json unfound = json::array();
  for (const auto& u : r.unfound) unfound.push_back({{"id", u.id}, {"reason", u.reason}, {"evidence", u.evidence}});
  json out = {{"schema", kResultsSchema},
              {"tool", {{"name", "gpuscope"}, {"version", r.tool_version}}},
              {"device", device_to_json(r.device)},
              {"series", std::move(series)},
              {"findings", std::move(findings)},
              {"skipped", std::move(skipped)},
              {"unfound", std::move(unfound)},
              {"run", r.run}};
  // Only where the closed loop ran (docs/results-format.md, "model").
  if (!r.model.empty()) out["model"] = r.model;
  return out;
}

Results results_from_json(const nlohmann::json& j) {
  const ObjectReader o(j, "");
  std::string schema;
  o.get("schema", schema);
  if (schema != kResultsSchema)
    fail("schema", fmt::format("expected \"{}\", got \"{}\"", kResultsSchema, schema));

  Results r;
  const ObjectReader tool(o.required("tool"), "tool");
  tool.get("version", r.tool_version);
  r.device = device_from_json_at(o.required("device"), "device");
  r.series = array_from_json<Series>(o, "series", series_from_json);
  r.findings = array_from_json<Finding>(o, "findings", finding_from_json);
  r.skipped = array_from_json<Skipped>(o, "skipped", skipped_from_json);
  // Absent from files written before it existed.
  if (o.optional("unfound")) r.unfound = array_from_json<Unfound>(o, "unfound", unfound_from_json);
  if (const json* run = o.optional("run")) read_object(*run, "run", r.run);
  if (const json* model = o.optional("model")) read_object(*model, "model", r.model);
  return r;
}

Results read_results_file(const std::string& path) {
  return parse_results_text(read_input_file(path, "results file", kResultsLimits.max_bytes), path);
}

Results parse_results_text(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw UsageError(fmt::format("results file '{}' is empty", path));
  json j;
  try {
    j = parse_json_input(text, kResultsLimits.max_depth);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("results file '{}' is not valid JSON: {}", path, e.what()));
  }
  try {
    return results_from_json(j);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("results file '{}' is not gpuscope results: {}", path, e.what()));
  }
}

std::string results_file_text(const Results& r, const std::string& path, size_t max_bytes) {
  const json j = to_json(r);
  // Invalid UTF-8 in a driver-reported string must not lose the whole run.
  std::string text = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  // Indented, a long series takes several times its compact size (a line
  // per number): past the limit the file is written compact.
  if (text.size() > max_bytes) text = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (text.size() > max_bytes)
    throw UsageError(fmt::format("results for '{}' would be {:.1f} MiB, more than the {:.1f} MiB gpuscope reads "
                                 "back (core/json_input.hpp): not written",
                                 path, static_cast<double>(text.size()) / (1 << 20),
                                 static_cast<double>(max_bytes) / (1 << 20)));
  return text;
}

void write_results_file_atomic(const Results& r, const std::string& path) {
  write_file_atomic(results_file_text(r, path), path);
}

}  // namespace gpuscope
