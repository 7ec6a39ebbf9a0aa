#include "app/multi_device_run.hpp"

#include "backends/backend.hpp"
#include "core/atomic_file.hpp"
#include "core/device_identity.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "report/html_report.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <ios>
#include <iostream>
#include <vector>

namespace gpuscope {

namespace {

constexpr int kExitFailure = 1;  // as main.cpp's: a device or probe failed

// What a device that could not finish leaves in its folder: its
// results.json (the probes that finished, where there were any) with the
// failure added to `skipped` under "device".
void record_device_failure(const std::string& id, const std::vector<DeviceInfo>& listed,
                           const std::filesystem::path& dir, const std::string& command_line,
                           const std::string& what) {
  const std::string path = (dir / "results.json").string();
  Results r;
  try {
    r = read_results_file(path);
  } catch (const std::exception&) {
    r = Results{};
    r.tool_version = GPUSCOPE_VERSION;
    r.device.id = id;
    for (const auto& d : listed)
      if (d.id == id) r.device = d;
    r.run = new_run_record(command_line);
  }
  r.skipped.push_back({"device", "failed: " + what});
  try {
    std::filesystem::create_directories(dir);
    write_results_file_atomic(r, path);
  } catch (const std::exception& e) {
    std::cerr << "gpuscope: could not record the failure in " << printable(path) << ": " << printable(e.what())
              << "\n";
  }
}

// The device IDs `plan` names, each checked: a listed device, or one a
// backend opens unlisted (sim:PATH.json), opened once now so that a bad one
// is bad input before any device runs.
std::vector<std::string> checked_device_ids(const RunPlan& plan, const std::vector<DeviceInfo>& listed) {
  const auto backends = make_backends();
  const auto opens_unlisted = [&](const std::string& id) {
    for (const auto& b : backends)
      if (b->name() == api_of_id(id) && b->opens_unlisted(id)) return true;
    return false;
  };
  const std::vector<std::string> ids = resolve_device_list(plan, listed, opens_unlisted);
  for (const auto& id : ids)
    if (std::none_of(listed.begin(), listed.end(), [&](const DeviceInfo& d) { return d.id == id; }))
      open_device(id);
  return ids;
}

struct Outcome {
  std::string id, folder, status;
};

// The comparison of every device whose folder holds a readable results.json:
// on stdout, and at `compare_path` when there are two or more. Returns how
// many there were.
size_t compare_outcomes(const std::vector<Outcome>& outcomes, const std::filesystem::path& compare_path,
                        bool color) {
  std::vector<Results> results;
  results.reserve(outcomes.size());
  for (const auto& o : outcomes) {
    try {
      results.push_back(read_results_file((std::filesystem::path(o.folder) / "results.json").string()));
    } catch (const std::exception& e) {
      std::cerr << "gpuscope: " << o.id << ": " << printable(e.what()) << "\n";
    }
  }
  if (results.size() >= 2) {
    std::vector<ReportRun> runs;
    for (const auto& r : results)
      runs.push_back({fmt::format("{} ({})", r.device.name.empty() ? r.device.id : r.device.name, r.device.id), &r,
                      false});
    std::cout << format_comparison(runs, {color});
    write_file_atomic(render_html_report(runs), compare_path.string());
  }
  return results.size();
}

}  // namespace

int run_each_device(const RunPlan& plan, const std::string& command_line, bool color,
                    const RunOneDevice& run_one) {
  prepare_output_dir(plan.out);
  const std::vector<DeviceInfo> listed = enumerate_devices();
  const std::vector<std::string> ids = checked_device_ids(plan, listed);
  std::vector<std::string> folders;
  for (const auto& id : ids) folders.push_back(device_folder_name(id, folders));

  std::vector<Outcome> outcomes;
  int status = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    const std::filesystem::path dir = std::filesystem::path(plan.out) / folders[k];
    const std::string head = fmt::format("== [{}/{}] {} -> {} ==", k + 1, ids.size(), ids[k], dir.string());
    std::cout << (color ? "\x1b[1m" + head + "\x1b[0m" : head) << "\n" << std::flush;
    RunPlan one = plan;
    one.multi = one.all_devices = false;
    one.devices.clear();
    one.device = ids[k];
    one.out = dir.string();
    std::string said = "ok";
    try {
      if (run_one(one) != 0) {
        said = "a probe failed (its reason is in results.json)";
        status = kExitFailure;
      }
    } catch (const std::ios_base::failure&) {
      throw;  // standard output refused bytes: no device's failure (main says so, exit 2)
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (const auto* b = dynamic_cast<const BuildError*>(&e)) what += "\nbuild log:\n" + b->log;
      std::cerr << "gpuscope: " << ids[k] << " failed: " << printable(what) << "\n";
      record_device_failure(ids[k], listed, dir, command_line, what);
      said = "failed: " + what.substr(0, what.find('\n'));
      status = kExitFailure;
    }
    outcomes.push_back({ids[k], dir.string(), said});
    std::cout << "\n";
  }

  const std::filesystem::path compare_path = std::filesystem::path(plan.out) / "compare.html";
  const size_t compared = compare_outcomes(outcomes, compare_path, color);
  std::cout << "\ndevices:\n";
  for (const auto& o : outcomes) std::cout << fmt::format("  {:<14} {}  {}\n", o.id, o.folder, printable(o.status));
  if (compared >= 2) std::cout << "comparison: " << compare_path.string() << "\n";
  return status;
}

}  // namespace gpuscope
