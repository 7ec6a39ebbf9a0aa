// The options of `gpuscope run`, checked in one place before any device
// time is spent: every value out of range, empty or repeated is a
// UsageError (exit code 2) naming the option and what it accepts.
#pragma once

#include "core/device_info.hpp"
#include "probes/probe.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope {

// As given on the command line; an option not given is nullopt.
struct RunArgs {
  std::optional<std::string> device;
  std::optional<std::string> probes;  // comma-separated names
  std::string out = "gpuscope-out";
  bool quick = false;
  bool quiet = false;
  double max_launch_ms = kDefaultMaxLaunchMs;
  double budget_scale = 1;
  std::optional<double> sustain_s;  // --sustain-s; unset: the sustain probe's default
  std::string sysfs_root;  // --sysfs-root; empty: /sys (checked where driver facts are read)
  std::optional<std::string> ops;           // --ops: comma-separated type.op
  std::optional<std::string> compute_plan;  // --compute-plan: key=value,...
  std::string texture_image = "auto";       // --texture-image: auto, buffer or 2d
  std::string chase = "auto";               // --chase: auto, address or index
  bool no_replay = false;                   // --no-replay: write the model, replay nothing
  bool no_fit = false;                      // --no-fit: replay, but keep the readers' values

  static constexpr double kDefaultMaxLaunchMs = 200;
};

// Ceilings a run can honour: a timed launch needs at least a millisecond to
// be timed against its launch overhead, and 10 s is past every driver's
// watchdog; a budget scaled 100x already takes hours.
inline constexpr double kMinLaunchMs = 1, kMaxLaunchMs = 10000;
inline constexpr double kMinBudgetScale = 0.01, kMaxBudgetScale = 100;
// The sustain probe's load: at least a tenth of a second (a few launches),
// at most an hour (throttling shows within minutes).
inline constexpr double kMinSustainS = 0.1, kMaxSustainS = 3600;

// The number an option's text holds, as the user typed it: throws
// UsageError naming the option, what was typed and the range [lo, hi] (with
// `unit`, " ms") when the text is empty, is not wholly a number, or is one
// outside the range (NaN and infinity, and numbers past a double's range
// such as 1e309, included).
double number_option(const char* option, const std::string& text, double lo, double hi, const char* unit);

struct RunPlan {
  std::string device;  // empty: the default device
  // --device with commas or `all`: every device in turn, each into its own
  // folder under `out`. `devices` holds the IDs as given (syntax checked;
  // resolve_device_list checks them against the devices found); empty with
  // all_devices.
  bool multi = false;
  bool all_devices = false;
  std::vector<std::string> devices;
  std::vector<const ProbeDef*> probes;
  std::string out;
  bool quick = false;
  bool quiet = false;
  double max_launch_ms = RunArgs::kDefaultMaxLaunchMs;
  double budget_scale = 1;
  std::optional<double> sustain_s;
  std::string sysfs_root;
  std::vector<std::string> ops;
  std::map<std::string, int64_t> compute_plan;
  TextureImages texture_images = TextureImages::automatic;
  ChaseMethod chase = ChaseMethod::automatic;
  bool replay = true;  // replay the run on its model (model/closed_loop.hpp)
  bool fit = true;     // and fit it where the replay misses (model/fit.hpp)
};

// Throws UsageError for an empty --device or --out, a --device list with an
// empty or repeated ID or with `all` among other IDs, a --probes or --ops
// list that is empty, holds an empty or unknown name or names one twice, a
// --max-launch-ms, --budget-scale or --sustain-s outside its range (NaN and
// infinity included), a --compute-plan with an unknown key, a repeated key or
// a value outside 1..its limit, a --texture-image other than auto,
// buffer, 2d, and a --chase other than auto, address, index.
RunPlan plan_run(const RunArgs& a);

// The devices a multi-device plan runs, in order: `all` is every listed
// device that is not simulated (simulated ones run only when named); a list
// is checked ID by ID against `listed` and the IDs a backend opens unlisted
// (`opens_unlisted`, e.g. sim:PATH.json). Throws UsageError for an unknown ID
// (naming it and the valid ones) and for `all` when no device is found.
std::vector<std::string> resolve_device_list(const RunPlan& p, const std::vector<DeviceInfo>& listed,
                                             const std::function<bool(const std::string&)>& opens_unlisted);

// A folder name for a device ID: every character outside [A-Za-z0-9._-]
// becomes '-' ("opencl:1:0" -> "opencl-1-0"); `taken` folders get "-2", "-3" ...
std::string device_folder_name(const std::string& id, const std::vector<std::string>& taken = {});

// Creates --out (and its parents) where missing; throws UsageError when it
// cannot be made or is not a directory, before any device time is spent.
void prepare_output_dir(const std::string& out);

// The time now, as results.json's run.started_utc holds it:
// ISO 8601 in UTC to the second, "YYYY-MM-DDThh:mm:ssZ".
std::string utc_now();

// What results.json's `run` starts as: the command line, the start time and
// no probes yet (each finished probe adds its wall time under "probes").
nlohmann::json new_run_record(const std::string& command_line);

}  // namespace gpuscope
