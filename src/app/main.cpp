// gpuscope's command line: list devices, run probes, re-analyse results.
// Exit codes (RESULTS.md): 0 success, 2 bad usage or unreadable input,
// 1 a failure during a run (finished probes' results are still written).
#include "analysis/analyze.hpp"
#include "backends/backend.hpp"
#include "core/error.hpp"
#include "probes/probe.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace gpuscope {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

bool stdout_wants_color() { return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int cmd_list() {
  const auto devices = enumerate_devices();
  if (devices.empty()) {
    std::cerr << "gpuscope: no devices found; install an OpenCL driver (PoCL for the CPU: "
                 "apt-get install pocl-opencl-icd)\n";
    return kExitFailure;
  }
  for (const auto& d : devices)
    std::cout << fmt::format("{:<14} {:<5} {:<40} {}\n", d.id, d.type, d.name, d.api);
  return 0;
}

struct RunArgs {
  std::string device;
  std::string probes;
  std::string out = "gpuscope-out";
  bool quick = false;
  bool quiet = false;
  double max_launch_ms = 200;
  double budget_scale = 1;
};

int cmd_run(const RunArgs& a, const std::string& command_line) {
  std::vector<const ProbeDef*> probes;
  if (a.probes.empty()) {
    for (const auto& p : probe_registry()) probes.push_back(&p);
  } else {
    for (const auto& name : split_list(a.probes)) probes.push_back(&find_probe(name));
  }
  if (a.max_launch_ms <= 0) throw UsageError("--max-launch-ms must be positive");

  // An output directory that cannot be made is bad input, found before any
  // device time is spent.
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec || !std::filesystem::is_directory(a.out))
    throw UsageError(fmt::format("cannot use '{}' as the output directory: {}", a.out,
                                 ec ? ec.message() : "not a directory"));

  auto device = open_device(a.device);
  const std::string results_path = (std::filesystem::path(a.out) / "results.json").string();

  ProbeOptions options;
  options.quick = a.quick;
  options.budget_scale = a.budget_scale;
  options.harness.max_launch_ms = a.max_launch_ms;
  options.harness.target_launch_ms = std::min(options.harness.target_launch_ms, a.max_launch_ms / 4);
  if (a.quick) {
    options.harness.min_samples = 3;
    options.harness.max_samples = 5;
  }

  Results r;
  r.tool_version = GPUSCOPE_VERSION;
  r.device = device->info();
  r.run = {{"command", command_line},
           {"started_utc", utc_now()},
           {"quick", a.quick},
           {"max_launch_ms", a.max_launch_ms},
           {"probes", nlohmann::json::object()}};
  r.findings = analysis::analyze_all(r);
  write_results_file_atomic(r, results_path);

  const bool show_progress = !a.quiet;
  int status = 0;
  for (const ProbeDef* p : probes) {
    ProbeContext ctx{*device, options, 0, [&](const std::string& line) {
                       if (show_progress) std::cerr << "  " << line << "\n";
                     }};
    ctx.budget_s = planned_budget_s(*p, options, r.device);
    if (show_progress) std::cerr << fmt::format("gpuscope: {} on {} ...\n", p->name, r.device.name);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      auto series = p->run(ctx);
      r.series.insert(r.series.end(), series.begin(), series.end());
    } catch (const Unsupported& e) {
      r.skipped.push_back({p->name, fmt::format("unsupported: {}", e.what())});
    } catch (const BuildError& e) {
      r.skipped.push_back({p->name, fmt::format("{}\nbuild log:\n{}", e.what(), e.log)});
    } catch (const OutOfResources& e) {
      r.skipped.push_back({p->name, fmt::format("out of resources: {}", e.what())});
    } catch (const DeviceError& e) {
      // A failing API call can leave the context unusable (NVIDIA's driver
      // loses it after a kernel fault): the next probe gets a fresh one.
      r.skipped.push_back({p->name, fmt::format("failed: {}", e.what())});
      status = kExitFailure;
      try {
        device = open_device(r.device.id);
      } catch (const std::exception& reopen) {
        r.skipped.back().reason += fmt::format("; reopening the device failed too: {}", reopen.what());
        write_results_file_atomic(r, results_path);
        throw;
      }
    } catch (const std::exception& e) {
      // A wrong kernel result: the run is a failure, but what finished is kept.
      r.skipped.push_back({p->name, fmt::format("failed: {}", e.what())});
      status = kExitFailure;
    }
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.run["probes"][p->name] = {{"wall_s", wall_s}};
    r.findings = analysis::analyze_all(r);
    write_results_file_atomic(r, results_path);
    if (show_progress) std::cerr << fmt::format("gpuscope: {} done in {:.1f} s\n", p->name, wall_s);
  }
  std::cout << format_summary(r, {stdout_wants_color()});
  std::cout << "\nresults: " << results_path << "\n";
  return status;
}

int cmd_analyze(const std::string& path, const std::string& out) {
  Results r = read_results_file(path);
  r.findings = analysis::analyze_all(r);
  std::cout << format_summary(r, {stdout_wants_color()});
  if (!out.empty()) {
    const std::string results_path = (std::filesystem::path(out) / "results.json").string();
    write_results_file_atomic(r, results_path);
    std::cout << "\nresults: " << results_path << "\n";
  }
  return 0;
}

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int main_impl(int argc, char** argv) {
  CLI::App app{"gpuscope: infers what a GPU's vendor does not say, from microbenchmarks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpuscope ") + GPUSCOPE_VERSION);

  auto* list = app.add_subcommand("list", "list devices: ID, type, name, API version");

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "run probes on a device and infer its parameters");
  run->add_option("--device", run_args.device, "device ID from `gpuscope list` (default: first GPU)");
  std::string probe_names;
  for (const auto& p : probe_registry()) probe_names += (probe_names.empty() ? "" : ",") + p.name;
  run->add_option("--probes", run_args.probes, "comma-separated probes (default: all: " + probe_names + ")");
  run->add_option("--out", run_args.out, "output directory")->capture_default_str();
  run->add_flag("--quick", run_args.quick, "fewer points and samples: a first look");
  run->add_flag("--quiet,-q", run_args.quiet, "no progress on stderr");
  run->add_option("--max-launch-ms", run_args.max_launch_ms,
                  "ceiling on one timed launch (mobile drivers kill long kernels)")
      ->capture_default_str();
  run->add_option("--budget-scale", run_args.budget_scale,
                  "multiply every probe's time budget (more refinement when > 1)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  std::string analyze_path, analyze_out;
  auto* analyze = app.add_subcommand("analyze", "recompute findings from a results.json, no device needed");
  analyze->add_option("results", analyze_path, "results.json of an earlier run")->required();
  analyze->add_option("--out", analyze_out, "write DIR/results.json with the recomputed findings");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  if (*list) return cmd_list();
  if (*run) return cmd_run(run_args, join_args(argc, argv));
  if (*analyze) return cmd_analyze(analyze_path, analyze_out);
  return kExitUsage;
}

}  // namespace
}  // namespace gpuscope

int main(int argc, char** argv) {
  try {
    return gpuscope::main_impl(argc, argv);
  } catch (const gpuscope::UsageError& e) {
    std::cerr << "gpuscope: " << e.what() << "\n";
    return gpuscope::kExitUsage;
  } catch (const gpuscope::BuildError& e) {
    std::cerr << "gpuscope: " << e.what() << "\nbuild log:\n" << e.log << "\n";
    return gpuscope::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "gpuscope: " << e.what() << "\n";
    return gpuscope::kExitFailure;
  }
}
