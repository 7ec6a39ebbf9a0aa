#include "app/run_options.hpp"

#include "core/error.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <set>

namespace gpuscope {

namespace {

double in_range(const char* option, double v, double lo, double hi, const char* unit) {
  if (!std::isfinite(v) || v < lo || v > hi)
    throw UsageError(fmt::format("{} {} is outside [{:g}, {:g}]{}", option, v, lo, hi, unit));
  return v;
}

// The comma-separated items of `list`, each non-empty and given once;
// `item` and `what` name them in messages ("name", "probe names").
std::vector<std::string> list_items(const char* option, const std::string& list, const char* item_noun,
                                    const char* what) {
  if (list.empty())
    throw UsageError(fmt::format("{} is empty; give {} separated by commas, or leave it out", option, what));
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw UsageError(
          fmt::format("{} '{}' has an empty {}; give {} separated by commas", option, list, item_noun, what));
    if (!seen.insert(item).second) throw UsageError(fmt::format("{} names '{}' twice", option, item));
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<std::string> ops_named(const std::string& list) {
  const std::vector<std::string> known = compute_op_names();
  std::vector<std::string> out = list_items("--ops", list, "entry", "type.op entries");
  for (const auto& op : out)
    if (std::find(known.begin(), known.end(), op) == known.end())
      throw UsageError(fmt::format("--ops: unknown entry '{}'; valid: {}", op, fmt::join(known, ", ")));
  return out;
}

std::map<std::string, int64_t> plan_named(const std::string& list) {
  const auto& limits = compute_plan_limits();
  std::string keys;
  for (const auto& [k, hi] : limits) keys += fmt::format("{}{} (1..{})", keys.empty() ? "" : ", ", k, hi);
  std::map<std::string, int64_t> out;
  for (const auto& item : list_items("--compute-plan", list, "pair", "key=value pairs")) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const auto limit = limits.find(key);
    if (eq == std::string::npos || limit == limits.end())
      throw UsageError(fmt::format("--compute-plan: '{}' is not key=value with a known key; keys: {}", item, keys));
    const std::string text = item.substr(eq + 1);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || v < 1 || v > limit->second)
      throw UsageError(fmt::format("--compute-plan: {} = '{}' is not a whole number in 1..{}", key, text, limit->second));
    if (!out.emplace(key, v).second) throw UsageError(fmt::format("--compute-plan names '{}' twice", key));
  }
  return out;
}

TextureImages texture_images_named(const std::string& name) {
  if (name == "auto") return TextureImages::automatic;
  if (name == "buffer") return TextureImages::buffer_1d;
  if (name == "2d") return TextureImages::two_d;
  throw UsageError(fmt::format("--texture-image '{}': give auto, buffer or 2d", name));
}

ChaseMethod chase_named(const std::string& name) {
  if (name == "auto") return ChaseMethod::automatic;
  if (name == "address") return ChaseMethod::address;
  if (name == "index") return ChaseMethod::index;
  throw UsageError(fmt::format("--chase '{}': give auto, address or index", name));
}

std::vector<const ProbeDef*> probes_named(const std::string& list) {
  std::vector<const ProbeDef*> out;
  for (const auto& name : list_items("--probes", list, "name", "probe names")) out.push_back(&find_probe(name));
  return out;
}

}  // namespace

double number_option(const char* option, const std::string& text, double lo, double hi, const char* unit) {
  const std::string range = fmt::format("a number from {:g} to {:g}{}", lo, hi, unit);
  if (text.empty()) throw UsageError(fmt::format("{} is empty; give {}", option, range));
  // The whole text must be the number ("5ms" is not); NaN, infinity and
  // numbers past a double's range (ERANGE) are outside every range.
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  const bool whole = end == begin + text.size();
  if (!whole) throw UsageError(fmt::format("{} '{}' is not a number; give {}", option, printable(text), range));
  if (errno == ERANGE || !std::isfinite(v) || v < lo || v > hi)
    throw UsageError(fmt::format("{} {} is outside [{:g}, {:g}]{}", option, printable(text), lo, hi, unit));
  return v;
}

RunPlan plan_run(const RunArgs& a) {
  RunPlan p;
  if (a.device) {
    if (a.device->empty())
      throw UsageError("--device is empty; give an ID from `gpuscope list`, or leave it out for the default");
    if (*a.device == "all") {
      p.multi = p.all_devices = true;
    } else if (a.device->find(',') != std::string::npos) {
      p.multi = true;
      p.devices = list_items("--device", *a.device, "ID", "device IDs");
      for (const auto& id : p.devices)
        if (id == "all") throw UsageError("--device: 'all' stands alone, not in a list of IDs");
    } else {
      p.device = *a.device;
    }
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
  p.replay = !a.no_replay;
  p.fit = !a.no_fit;
  p.max_launch_ms = in_range("--max-launch-ms", a.max_launch_ms, kMinLaunchMs, kMaxLaunchMs, " ms");
  p.budget_scale = in_range("--budget-scale", a.budget_scale, kMinBudgetScale, kMaxBudgetScale, "");
  if (a.sustain_s) p.sustain_s = in_range("--sustain-s", *a.sustain_s, kMinSustainS, kMaxSustainS, " s");
  p.sysfs_root = a.sysfs_root;
  if (a.ops) p.ops = ops_named(*a.ops);
  if (a.compute_plan) p.compute_plan = plan_named(*a.compute_plan);
  p.texture_images = texture_images_named(a.texture_image);
  p.chase = chase_named(a.chase);
  return p;
}

std::vector<std::string> resolve_device_list(const RunPlan& p, const std::vector<DeviceInfo>& listed,
                                             const std::function<bool(const std::string&)>& opens_unlisted) {
  const auto valid = [&] {
    std::string out;
    for (const auto& d : listed) out += fmt::format("\n  {:<14} {:<5} {}", d.id, d.type, d.name);
    return out.empty() ? std::string(" none found (is an OpenCL driver installed? try PoCL: pocl-opencl-icd)")
                       : out;
  };
  std::vector<std::string> ids;
  if (p.all_devices) {
    for (const auto& d : listed)
      if (d.type != "sim") ids.push_back(d.id);
    if (ids.empty())
      throw UsageError("--device all: no devices found to run (simulated ones run only when named); devices:" +
                       valid());
    return ids;
  }
  for (const auto& id : p.devices) {
    const bool known = std::any_of(listed.begin(), listed.end(), [&](const DeviceInfo& d) { return d.id == id; });
    if (!known && !opens_unlisted(id))
      throw UsageError(fmt::format("--device: unknown device '{}'; valid device IDs:{}", id, valid()));
    ids.push_back(id);
  }
  return ids;
}

std::string device_folder_name(const std::string& id, const std::vector<std::string>& taken) {
  std::string base;
  for (char c : id) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    base += keep ? c : '-';
  }
  if (base.empty() || base == "." || base == "..") base = "device" + base;
  std::string name = base;
  for (int n = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++n) name = fmt::format("{}-{}", base, n);
  return name;
}

void prepare_output_dir(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw UsageError(fmt::format("cannot use '{}' as the output directory: {}", out,
                                 ec ? ec.message() : "not a directory"));
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json new_run_record(const std::string& command_line) {
  return {{"command", command_line}, {"started_utc", utc_now()}, {"probes", nlohmann::json::object()}};
}

}  // namespace gpuscope
