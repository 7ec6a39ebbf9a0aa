// gpuscope's command line: list devices, run probes, re-analyse results.
// Exit codes (docs/results-format.md): 0 success, 2 bad usage, unreadable input
// or an unusable output, 1 a failure during a run (finished probes' results
// are still written).
#include "analysis/analyze.hpp"
#include "app/build_ahead.hpp"
#include "app/multi_device_run.hpp"
#include "app/results_saver.hpp"
#include "model/closed_loop.hpp"
#include "app/run_options.hpp"
#include "backends/backend.hpp"
#include "core/atomic_file.hpp"
#include "core/device_identity.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "driver/driver_readers.hpp"
#include "probes/probe.hpp"
#include "report/block_diagram.hpp"
#include "report/block_diagram_svg.hpp"
#include "report/driver_section.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/progress.hpp"
#include "report/reference.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

namespace gpuscope {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

bool stdout_wants_color() { return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr; }
bool stderr_wants_color() { return stderr_is_terminal() && std::getenv("NO_COLOR") == nullptr; }

// What --compare and --format add to run, analyze and report.
struct ReportArgs {
  std::string compare;          // a known device or a reference .json; empty: none
  std::string format = "text";  // what goes to stdout: "text" (the spec sheet) or "md"
};

// The reference a --compare names, as a Results reporters can draw; found
// before any device time is spent.
std::optional<Results> load_reference(const ReportArgs& a) {
  if (a.compare.empty()) return std::nullopt;
  return reference_as_results(find_reference(a.compare));
}

std::vector<ReportRun> report_runs(const Results& r, const std::optional<Results>& reference) {
  std::vector<ReportRun> runs = {{r.device.name.empty() ? r.device.id : r.device.name, &r, false}};
  if (reference)
    runs.push_back({reference->device.id.substr(reference->device.id.find(':') + 1), &*reference, true});
  return runs;
}

// Findings, and what was looked for and not found, from the series so far.
void set_findings(Results& r) {
  analysis::Analysis a = analysis::analyze_with_gaps(r);
  r.findings = std::move(a.findings);
  r.unfound = std::move(a.unfound);
}

// The closed loop after the analysis: model.json in `out` (none without
// it), the replay when asked, the findings held to it.
void close_loop(Results& r, const std::string& out, model::LoopReplay mode, model::LoopFit fit) {
  const std::string model_path = out.empty() ? "" : (std::filesystem::path(out) / "model.json").string();
  model::close_the_loop(r, model_path, mode, fit);
  // The verdict itself is the spec sheet's second line; a model that could
  // not be built is said here.
  if (r.model.contains("error") && r.model["error"].is_string())
    std::cerr << "gpuscope: " << r.model["error"].get<std::string>() << "\n";
}

void print_summary(const Results& r, const std::optional<Results>& reference, const ReportArgs& a) {
  if (a.format == "md")
    std::cout << format_markdown(report_runs(r, reference));
  else
    std::cout << format_summary(r, {stdout_wants_color()}, reference ? &*reference : nullptr);
}

// report.md at `path`, with the block diagram it shows beside it.
void write_markdown_report(const std::vector<ReportRun>& runs, const std::filesystem::path& path) {
  write_file_atomic(render_block_diagram_svg(block_diagram(*runs[0].results), "report.html"),
                         (path.parent_path() / kDiagramFileName).string());
  write_file_atomic(format_markdown(runs, kDiagramFileName), path.string());
}

// results.json's companions in `dir`: report.html, report.md and the diagram.
void write_reports(const Results& r, const std::optional<Results>& reference,
                   const std::filesystem::path& dir) {
  const auto runs = report_runs(r, reference);
  write_file_atomic(render_html_report(runs), (dir / "report.html").string());
  write_markdown_report(runs, dir / "report.md");
}

// Where driver facts are read from: /sys, or the tree --sysfs-root names.
DriverQuery driver_query(const std::string& sysfs_root, const char* when) {
  DriverQuery q;
  if (!sysfs_root.empty()) {
    if (!std::filesystem::is_directory(sysfs_root))
      throw UsageError(fmt::format("--sysfs-root '{}' is not a directory", sysfs_root));
    q.sysfs_root = sysfs_root;
    q.explicit_root = true;
  }
  q.when = when;
  return q;
}

int cmd_list(bool references, bool verbose, const std::string& sysfs_root) {
  if (references) {
    for (const auto& p : known_references())
      std::cout << fmt::format("{:<12} {:<40} {} values\n", p.name, p.device.name, p.values.size());
    return 0;
  }
  const auto devices = enumerate_devices();
  if (verbose) {
    for (const auto& b : make_backends()) std::cout << fmt::format("{:<7} {}\n", b->name(), b->availability());
    std::cout << "\n";
  }
  if (devices.empty()) {
    std::cerr << "gpuscope: no devices found; install an OpenCL driver (PoCL for the CPU: "
                 "apt-get install pocl-opencl-icd)\n";
    return kExitFailure;
  }
  for (const auto& d : devices) {
    std::cout << fmt::format("{:<14} {:<5} {:<40} {}\n", d.id, d.type, d.name, d.api);
    if (!verbose) continue;
    if (!d.uuid.empty() || !d.pci_address.empty())
      std::cout << fmt::format("    {:<10} uuid {}  pci {}\n", "identity", d.uuid.empty() ? "-" : d.uuid,
                               d.pci_address.empty() ? "-" : d.pci_address);
    std::vector<DriverSnapshot> snaps = d.driver;  // what the API said (Vulkan's shader cores)
    for (auto& snap : read_driver_facts(d, driver_query(sysfs_root, "start")))
      snaps.push_back(std::move(snap));
    for (const auto& snap : snaps) {
      for (const auto& f : snap.facts)
        std::cout << fmt::format("    {:<10} {:<26} {}  ({})\n", snap.driver, f.key, format_driver_value(f),
                                 f.source);
      for (const auto& n : snap.notes) std::cout << fmt::format("    {:<10} note: {}\n", snap.driver, n);
    }
  }
  for (const auto& group : same_device_groups(devices)) {
    std::string ids;
    for (const DeviceInfo* d : group.devices) ids += (ids.empty() ? "" : ", ") + d->id;
    std::cout << fmt::format("one device: {} (same {} {})\n", ids, group.by, group.value);
  }
  return 0;
}

int cmd_run(const RunPlan& a, const ReportArgs& ra, const std::string& command_line) {
  const auto reference = load_reference(ra);
  const std::vector<const ProbeDef*>& probes = a.probes;

  // An output directory that cannot be made is bad input, found before any
  // device time is spent.
  prepare_output_dir(a.out);
  for (const char* name : {"results.json", "report.html", "report.md", kDiagramFileName})
    check_output_file((std::filesystem::path(a.out) / name).string());

  DriverQuery driver = driver_query(a.sysfs_root, "start");  // a bad --sysfs-root before any device time
  auto device = open_device(a.device);
  // Every launch is waited for at most a multiple of the plan
  // (backends/launch_bound.hpp), so a hung one cannot hold the run.
  const LaunchBound bound{a.max_launch_ms};
  device->set_launch_bound(bound);
  const std::string results_path = (std::filesystem::path(a.out) / "results.json").string();

  ProbeOptions options;
  options.quick = a.quick;
  options.budget_scale = a.budget_scale;
  options.ops = a.ops;
  options.compute_plan = a.compute_plan;
  options.texture_images = a.texture_images;
  options.chase = a.chase;
  if (a.sustain_s) options.sustain_s = *a.sustain_s;
  else if (a.quick) options.sustain_s = 1;
  options.harness.max_launch_ms = a.max_launch_ms;
  options.harness.target_launch_ms = std::min(options.harness.target_launch_ms, a.max_launch_ms / 4);
  if (a.quick) {
    options.harness.min_samples = 3;
    options.harness.max_samples = 5;
  }

  Results r;
  r.tool_version = GPUSCOPE_VERSION;
  r.device = device->info();
  // After what the backend read from its API (Vulkan's shader-core
  // properties), the OS driver's and vendor library's facts.
  for (auto& snap : read_driver_facts(r.device, driver)) r.device.driver.push_back(std::move(snap));
  r.run = new_run_record(command_line);
  r.run["quick"] = a.quick;
  r.run["max_launch_ms"] = a.max_launch_ms;
  set_findings(r);
  write_results_file_atomic(r, results_path);

  std::vector<PlannedProbe> plan;
  for (const ProbeDef* p : probes) plan.push_back({p->name, planned_budget_s(*p, options, r.device)});
  ProgressDisplay progress(std::cerr, !a.quiet && stderr_is_terminal(), stderr_wants_color(), plan,
                           stderr_columns());
  ResultsSaver saver(results_path, r.device.type == "gpu");
  BuildAhead ahead(*device, probes, options, r.device.type == "gpu");
  int status = 0;
  // A device error reopens the device for the next probe; one that could
  // not be, and may still be used by the failed launch, is kept to the end.
  const auto reopen = [&] {
    ahead.join();
    try {
      device = open_device(r.device.id);
      device->set_launch_bound(bound);
    } catch (const std::exception& reopen) {
      r.skipped.back().reason += fmt::format("; reopening the device failed too: {}", reopen.what());
      saver.save(r);
      saver.finish();
      throw;
    }
  };
  std::string lost;  // why the device is lost; the probes after it are not run
  for (size_t i = 0; i < probes.size(); ++i) {
    const ProbeDef* p = probes[i];
    if (!lost.empty()) {
      r.skipped.push_back({p->name, "not run: " + lost});
      continue;
    }
    // A fresh context per probe: a device error reopens the device (below).
    ProbeContext ctx{*device, options, plan[i].budget_s,
                     [&](const std::string& line) { progress.point(line); }};
    ctx.progress_fraction = [&](double done) { progress.fraction(done); };
    ctx.driver_facts = [&r, driver]() {
      DriverQuery q = driver;
      q.when = "during";
      return read_driver_facts(r.device, q);
    };
    progress.begin_probe(i);
    const auto t0 = std::chrono::steady_clock::now();
    const double build0_s = device->build_s();
    try {
      auto series = p->run(ctx);
      r.series.insert(r.series.end(), series.begin(), series.end());
    } catch (const Unsupported& e) {
      r.skipped.push_back({p->name, fmt::format("unsupported: {}", e.what())});
    } catch (const BuildError& e) {
      r.skipped.push_back({p->name, fmt::format("{}\nbuild log:\n{}", e.what(), e.log)});
    } catch (const OutOfResources& e) {
      r.skipped.push_back({p->name, fmt::format("out of resources: {}", e.what())});
    } catch (const LaunchTimeout& e) {
      // A launch past its bound. Lost: the launch may run on, and whatever a
      // fresh context queues waits behind it, so the run stops with what
      // finished. Only late: the next probe gets a fresh context, as below.
      r.skipped.push_back({p->name, fmt::format("failed: {}", e.what())});
      status = kExitFailure;
      if (e.device_lost) {
        lost = fmt::format("the device was lost in probe {}: {}", p->name, e.what());
        std::cerr << "gpuscope: " << printable(lost) << "; the probes after it are not run\n";
      } else {
        reopen();
      }
    } catch (const DeviceError& e) {
      // A failing API call can leave the context unusable (NVIDIA's driver
      // loses it after a kernel fault): the next probe gets a fresh one.
      r.skipped.push_back({p->name, fmt::format("failed: {}", e.what())});
      status = kExitFailure;
      reopen();
    } catch (const std::exception& e) {
      // A wrong kernel result: the run is a failure, but what finished is kept.
      r.skipped.push_back({p->name, fmt::format("failed: {}", e.what())});
      status = kExitFailure;
    }
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // A reopened device starts its build count again from 0.
    const double build_s = device->build_s() >= build0_s ? device->build_s() - build0_s : device->build_s();
    // results.json after every probe, so a run stopped half-way keeps what
    // finished (`gpuscope report` draws it); the reports once, at the end
    // (rendering them after each probe cost seconds of a whole run).
    const auto t_save = std::chrono::steady_clock::now();
    r.run["probes"][p->name] = {{"wall_s", wall_s}, {"build_s", build_s}};
    saver.save(r);
    r.run["probes"][p->name]["save_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_save).count();
    progress.end_probe(wall_s);
  }
  progress.finish();
  ahead.join();
  r.run["build_ahead_s"] = device->build_ahead_s();
  saver.finish();
  if (saver.in_background()) set_findings(r);  // in line, the last save set them
  // Clocks again, now that the device has been under load (before the
  // replay, which runs on the host and leaves the device idle).
  driver.when = "end";
  for (auto& snap : read_driver_facts(r.device, driver)) r.device.driver.push_back(std::move(snap));
  close_loop(r, a.out, a.replay ? model::LoopReplay::replay : model::LoopReplay::none,
             a.fit ? model::LoopFit::fit : model::LoopFit::no_fit);
  write_results_file_atomic(r, results_path);
  write_reports(r, reference, a.out);
  print_summary(r, reference, ra);
  const std::filesystem::path out(a.out);
  std::cout << "\nresults: " << results_path << "\nreport:  " << (out / "report.html").string() << "  "
            << (out / "report.md").string() << "\n";
  return status;
}

// `--device A,B,...` or `--device all` (multi_device_run.hpp), each device
// with cmd_run. --compare and --sysfs-root are checked before any device time.
int cmd_run_many(const RunPlan& a, const ReportArgs& ra, const std::string& command_line) {
  load_reference(ra);
  driver_query(a.sysfs_root, "start");
  return run_each_device(a, command_line, stdout_wants_color(),
                         [&](const RunPlan& one) { return cmd_run(one, ra, command_line); });
}

int cmd_analyze(const std::string& path, const std::string& out, model::LoopReplay replay, model::LoopFit fit,
                const ReportArgs& ra) {
  const auto reference = load_reference(ra);
  Results r = read_results_file(path);
  // Each series analysis sets aside is said, and recorded once (an
  // analyze of analyze's own output finds the same).
  for (const Skipped& s : analysis::unusable_series(r)) {
    std::cerr << "gpuscope: " << s.reason << "\n";
    const auto same = [&](const Skipped& k) { return k.probe == s.probe && k.reason == s.reason; };
    if (std::none_of(r.skipped.begin(), r.skipped.end(), same)) r.skipped.push_back(s);
  }
  set_findings(r);
  close_loop(r, out, replay, fit);
  print_summary(r, reference, ra);
  if (!out.empty()) {
    const std::string results_path = (std::filesystem::path(out) / "results.json").string();
    write_results_file_atomic(r, results_path);
    write_reports(r, reference, out);
    std::cout << "\nresults: " << results_path
              << "\nreport:  " << (std::filesystem::path(out) / "report.html").string() << "\n";
  }
  return 0;
}

// The findings stored in RESULTS.json (not recomputed: the report shows what
// the run concluded), as report.html beside it or at --out ("-": stdout).
int cmd_report(const std::string& path, std::string out, const ReportArgs& ra) {
  const auto reference = load_reference(ra);
  const Results r = read_results_file(path);
  const auto runs = report_runs(r, reference);
  const bool md = ra.format == "md";
  if (out == "-") {
    std::cout << (md ? format_markdown(runs) : render_html_report(runs));
    return 0;
  }
  if (out.empty())
    out = (std::filesystem::path(path).parent_path() / (md ? "report.md" : "report.html")).string();
  check_output_file(out);
  if (md)
    write_markdown_report(runs, out);
  else
    write_file_atomic(render_html_report(runs), out);
  std::cout << "report: " << out << "\n";
  return 0;
}

// Each input is a results.json or, where no such file exists, a known
// device's name (its published figures).
int cmd_compare(const std::vector<std::string>& inputs, const std::string& out, const ReportArgs& ra) {
  if (inputs.size() < 2) throw UsageError("compare needs at least two results files (or known device names)");
  check_output_file(out);
  std::vector<Results> results;
  std::vector<bool> is_reference;
  std::vector<std::string> stems, folders;
  results.reserve(inputs.size());
  for (const auto& in : inputs) {
    std::error_code ec;
    const bool file = std::filesystem::exists(in, ec);
    if (!file && !in.ends_with(".json")) {
      results.push_back(reference_as_results(find_reference(in)));
      is_reference.push_back(true);
    } else {
      results.push_back(read_results_file(in));
      is_reference.push_back(false);
    }
    const std::filesystem::path path(in);
    stems.push_back(path.stem().string());
    folders.push_back(path.parent_path().filename().string());
  }
  std::vector<ReportRun> runs;
  for (size_t i = 0; i < results.size(); ++i) {
    const DeviceInfo& d = results[i].device;
    std::string label = is_reference[i] ? d.id.substr(d.id.find(':') + 1) : (d.name.empty() ? d.id : d.name);
    // Runs of one device name are told apart by their device ids (one GPU
    // through two APIs), else by their file names, else by their folders
    // (every run writes results.json).
    bool same_name = false, same_id = false, same_stem = false;
    for (size_t j = 0; j < results.size(); ++j) {
      if (j == i || is_reference[j] || results[j].device.name != d.name) continue;
      same_name = true;
      same_id = same_id || results[j].device.id == d.id;
      same_stem = same_stem || stems[j] == stems[i];
    }
    if (same_name && !is_reference[i])
      label += " (" + (!same_id ? d.id : same_stem ? folders[i] + "/" + stems[i] : stems[i]) + ")";
    runs.push_back({label, &results[i], is_reference[i]});
  }
  if (ra.format == "md")
    std::cout << format_markdown(runs);
  else
    std::cout << format_comparison(runs, {stdout_wants_color()});
  write_file_atomic(render_html_report(runs), out);
  std::cout << "\ncomparison: " << out << "\n";
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
  bool list_references = false, list_verbose = false;
  std::string list_sysfs_root;
  list->add_flag("--references", list_references, "list the known devices --compare takes instead");
  list->add_flag("--verbose,-v", list_verbose,
                 "also say where each API's library came from (or why none was found) and what each GPU's driver "
                 "says about it");
  list->add_option("--sysfs-root", list_sysfs_root, "read driver facts from this tree instead of /sys (tests)");

  // Which OpenCL library to open; every command that opens devices takes it.
  std::string opencl_library;
  const auto add_library_option = [&](CLI::App* cmd) {
    cmd->add_option("--opencl-library", opencl_library,
                    "the OpenCL library to open instead of searching (also GPUSCOPE_OPENCL_LIBRARY)");
  };
  add_library_option(list);

  // --compare and --format, shared by run, analyze and report.
  ReportArgs report_args;
  const auto add_report_options = [&](CLI::App* cmd, const char* format_help) {
    cmd->add_option(
        "--compare", report_args.compare,
        "put a known device's published figures beside this one (names: `gpuscope list --references`; "
        "or a reference .json)");
    cmd->add_option("--format", report_args.format, format_help)
        ->check(CLI::IsMember({"text", "md"}))
        ->capture_default_str();
  };

  RunArgs run_args;
  std::string run_device, run_probes;
  auto* run = app.add_subcommand("run", "run probes on a device and infer its parameters");
  auto* device_option =
      run->add_option("--device", run_device,
                      "device ID from `gpuscope list` (default: first GPU); several separated by commas, or all "
                      "(every device but the simulated ones), each run into its own folder under --out with a "
                      "comparison page of them");
  std::string probe_names;
  for (const auto& p : probe_registry()) probe_names += (probe_names.empty() ? "" : ",") + p.name;
  auto* probes_option =
      run->add_option("--probes", run_probes, "comma-separated probes (default: all: " + probe_names + ")");
  run->add_option("--out", run_args.out, "output directory")->capture_default_str();
  run->add_flag("--quick", run_args.quick, "fewer points and samples: a first look");
  run->add_flag("--quiet,-q", run_args.quiet, "no progress on stderr");
  run->add_flag("--no-replay", run_args.no_replay,
                "write model.json but do not replay the run on it (a phone: `analyze --replay` later, anywhere)");
  run->add_flag("--no-fit", run_args.no_fit, "replay the run on its model but keep the readers' values (no fit)");
  // Numbers are taken as text and converted by number_option, so that a
  // message echoes what was typed and says the range.
  std::string max_launch_text, budget_text, sustain_text;
  auto* max_launch_option =
      run->add_option("--max-launch-ms", max_launch_text,
                      fmt::format("ceiling on one timed launch, {:g} to {:g} (mobile drivers kill long kernels; a "
                                  "launch still running at 10x this, 5 s at least, is cut as a device fault)",
                                  kMinLaunchMs, kMaxLaunchMs))
          ->default_str(fmt::format("{:g}", RunArgs::kDefaultMaxLaunchMs));
  auto* budget_option =
      run->add_option("--budget-scale", budget_text,
                      fmt::format("multiply every probe's time budget, {:g} to {:g} (more refinement when > 1)",
                                  kMinBudgetScale, kMaxBudgetScale))
          ->default_str("1");

  auto* sustain_option =
      run->add_option("--sustain-s", sustain_text,
                      fmt::format("seconds of load for the sustain probe, {:g} to {:g} (default {:g}; 60 and more to "
                                  "see throttling)",
                                  kMinSustainS, kMaxSustainS, ProbeOptions{}.sustain_s));

  run->add_option("--sysfs-root", run_args.sysfs_root,
                  "read the driver's facts from this tree instead of /sys (tests, captured trees)");
  std::string run_ops, run_compute_plan;
  auto* ops_option = run->add_option(
      "--ops", run_ops, "compute and oplatency: only these type.op entries, e.g. fp32.fma,fp64.fma (any of their full lists)");
  auto* plan_option = run->add_option(
      "--compute-plan", run_compute_plan,
      "compute and oplatency launch shape, e.g. chains=4,unroll=64,unroll_slow=4,items_per_cu=4096,local=256");
  run->add_option("--texture-image", run_args.texture_image,
                  "texture probe's image kind: auto (1D buffer images where large enough), buffer or 2d")
      ->capture_default_str();
  run->add_option("--chase", run_args.chase,
                  "latency, tlb and geometry: how the chase finds the next slot: auto (device addresses where the "
                  "device has them), address, or index (slot indices, address arithmetic measured and subtracted)")
      ->capture_default_str();
  add_library_option(run);
  add_report_options(run, "summary on stdout: text (spec sheet) or md (Markdown)");

  std::string analyze_path, analyze_out;
  bool analyze_replay = false, analyze_no_replay = false, analyze_no_fit = false;
  auto* analyze = app.add_subcommand("analyze", "recompute findings from a results.json, no device needed");
  analyze->add_option("results", analyze_path, "results.json of an earlier run")->required();
  analyze->add_option("--out", analyze_out,
                      "write DIR/results.json with the recomputed findings, and report.html, report.md");
  auto* replay_flag = analyze->add_flag("--replay", analyze_replay,
                                        "replay the run's probes on its model (model.json) and hold the findings "
                                        "to it (default: hold them to the replay the file recorded, if any)");
  analyze->add_flag("--no-replay", analyze_no_replay,
                    "write the model but hold the findings to no replay: the readers' confidences alone")
      ->excludes(replay_flag);
  analyze->add_flag("--no-fit", analyze_no_fit, "with --replay: keep the readers' values where the replay misses");
  add_report_options(analyze, "summary on stdout: text (spec sheet) or md (Markdown)");

  std::string report_path, report_out;
  auto* report =
      app.add_subcommand("report", "write the HTML report of a results.json (charts, findings, device)");
  report->add_option("results", report_path, "results.json of a run")->required();
  report->add_option("--out", report_out,
                     "file to write (default: report.html beside RESULTS; - for stdout)");
  add_report_options(report, "html (self-contained page) or md (Markdown); text means html here");

  std::vector<std::string> compare_inputs;
  std::string compare_out = "gpuscope-compare.html";
  auto* compare = app.add_subcommand(
      "compare", "findings of several runs side by side with ratios, and an HTML page with overlaid charts");
  compare->add_option("results", compare_inputs, "results.json files (or known device names) to compare")
      ->required();
  compare->add_option("--out", compare_out, "the HTML comparison to write")->capture_default_str();
  compare->add_option("--format", report_args.format, "table on stdout: text or md")
      ->check(CLI::IsMember({"text", "md"}))
      ->capture_default_str();

  // A first word that is no option and no subcommand is named, with the
  // valid ones (CLI11 would only say a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known)
      throw UsageError(fmt::format("unknown subcommand '{}'; valid subcommands: {}", printable(argv[1]), names));
  }

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

  BackendSettings backend_settings;
  if (list->count("--opencl-library") + run->count("--opencl-library") > 0)
    backend_settings.opencl_library = opencl_library;
  configure_backends(backend_settings);
  // An option given with an empty value is refused, never read as "not given".
  for (CLI::App* cmd : {run, analyze, report}) {
    if (*cmd && cmd->count("--compare") > 0 && report_args.compare.empty())
      throw UsageError("--compare is empty; give a known device (`gpuscope list --references`) or a reference "
                       "profile .json, or leave it out");
  }
  if (*analyze && analyze->count("--out") > 0 && analyze_out.empty())
    throw UsageError("analyze --out is empty; give a directory, or leave it out to write nothing");
  if (*report && report->count("--out") > 0 && report_out.empty())
    throw UsageError("report --out is empty; give a file, - for standard output, or leave it out for report.html "
                     "beside RESULTS");
  if (*compare && compare_out.empty()) throw UsageError("compare --out is empty; give the HTML file to write");

  if (*list) return cmd_list(list_references, list_verbose, list_sysfs_root);
  if (*run) {
    if (device_option->count() > 0) run_args.device = run_device;
    if (probes_option->count() > 0) run_args.probes = run_probes;
    if (ops_option->count() > 0) run_args.ops = run_ops;
    if (plan_option->count() > 0) run_args.compute_plan = run_compute_plan;
    if (max_launch_option->count() > 0)
      run_args.max_launch_ms =
          number_option("--max-launch-ms", max_launch_text, kMinLaunchMs, kMaxLaunchMs, " ms");
    if (budget_option->count() > 0)
      run_args.budget_scale = number_option("--budget-scale", budget_text, kMinBudgetScale, kMaxBudgetScale, "");
    if (sustain_option->count() > 0)
      run_args.sustain_s = number_option("--sustain-s", sustain_text, kMinSustainS, kMaxSustainS, " s");
    const RunPlan plan = plan_run(run_args);
    return plan.multi ? cmd_run_many(plan, report_args, join_args(argc, argv))
                      : cmd_run(plan, report_args, join_args(argc, argv));
  }
  if (*analyze) return cmd_analyze(analyze_path, analyze_out,
                                   analyze_replay      ? model::LoopReplay::replay
                                   : analyze_no_replay ? model::LoopReplay::none
                                                       : model::LoopReplay::hold_recorded,
                                   analyze_no_fit ? model::LoopFit::no_fit : model::LoopFit::fit, report_args);
  if (*report) return cmd_report(report_path, report_out, report_args);
  if (*compare) return cmd_compare(compare_inputs, compare_out, report_args);
  return kExitUsage;
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// Standard output refused bytes: a full disk, /dev/full. Exit code 2, an
// unusable output, unless the run failed already.
int stdout_failed(int error, int status) {
  // std::cerr flushes std::cout first (tie()): that flush must not throw again.
  std::cout.exceptions(std::ios::goodbit);
  std::cerr << "gpuscope: cannot write standard output: " << (error ? std::strerror(error) : "write error") << "\n";
  return status == 0 ? kExitUsage : status;
}

int main_reporting_errors(int argc, char** argv) {
  // A write to standard output that fails throws at once, while errno still
  // says why (the write(2) under the buffer that failed).
  std::cout.exceptions(std::ios::badbit);
  try {
    return main_impl(argc, argv);
  } catch (const std::ios_base::failure&) {
    return stdout_failed(errno, 0);
  } catch (const UsageError& e) {
    std::cerr << "gpuscope: " << printable(e.what()) << "\n";
    return kExitUsage;
  } catch (const BuildError& e) {
    std::cerr << "gpuscope: " << printable(e.what()) << "\nbuild log:\n" << printable(e.log) << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "gpuscope: " << printable(e.what()) << "\n";
    return kExitFailure;
  }
}

}  // namespace
}  // namespace gpuscope

int main(int argc, char** argv) {
  int status = gpuscope::main_reporting_errors(argc, argv);
  // What is still buffered meets the file at the last flush.
  if (!std::cout.bad()) {
    try {
      std::cout.flush();
      if (std::fflush(stdout) != 0) status = gpuscope::stdout_failed(errno, status);
    } catch (const std::ios_base::failure&) {
      status = gpuscope::stdout_failed(errno, status);
    }
  }
  // The flush at exit must not throw (std::terminate); it has been said.
  std::cout.exceptions(std::ios::goodbit);
  return status;
}
