// A probe runs kernels on a Device and yields measured series. It knows the
// Backend interface only; what the series mean is analysis' business.
#pragma once

#include "backends/backend.hpp"
#include "core/driver_facts.hpp"
#include "core/series.hpp"
#include "harness/harness.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuscope {

// Which image kind the texture probe reads (--texture-image).
enum class TextureImages { automatic, buffer_1d, two_d };

// How the latency-family probes (latency, tlb, geometry) chase (--chase):
// address: `p = *p` through device addresses (OpenCL pointers, Vulkan
// buffer device addresses); index: `p = slots[p]`, the form for devices
// without device addresses, whose address arithmetic the latency probe
// measures and subtracts; automatic: address where the device has it.
enum class ChaseMethod { automatic, address, index };

struct ProbeOptions {
  bool quick = false;       // fewer points and samples: a first look in seconds
  HarnessConfig harness;    // launch sizing and sampling
  double budget_scale = 1;  // multiplies every probe's time budget
  // --ops: the "type.op" entries the compute and oplatency probes run, from
  // their full lists whatever --quick says; empty: their default lists.
  std::vector<std::string> ops;
  // --compute-plan: overrides of the compute probes' launch shape, by key
  // (compute_plan_keys()); empty: the shape chosen for the device.
  std::map<std::string, int64_t> compute_plan;
  // automatic: 1D buffer images where the device's hold enough, else 2D.
  TextureImages texture_images = TextureImages::automatic;
  ChaseMethod chase = ChaseMethod::automatic;  // --chase
  double sustain_s = 3;     // seconds of load the sustain probe applies (--sustain-s)
  // Replay (model/replay.hpp): series id -> the x values a measured run
  // took. A probe that honours it measures exactly those points of that
  // series (within what the device can hold) and refines nothing; probes
  // that do not run their own sweep. Null: an ordinary run.
  const std::map<std::string, std::vector<double>>* replay_points = nullptr;
  // The points `series_id` is to be measured at, or null when this is no
  // replay of it.
  const std::vector<double>* replay_of(const std::string& series_id) const {
    if (!replay_points) return nullptr;
    auto it = replay_points->find(series_id);
    return it == replay_points->end() ? nullptr : &it->second;
  }
};

// Progress lines for a person watching (quiet when nobody is).
using ProgressFn = std::function<void(const std::string& line)>;

struct ProbeContext {
  Device& device;
  const ProbeOptions& options;
  double budget_s = 0;  // time the probe may spend on refinement and revisits (see budget())
  ProgressFn progress = [](const std::string&) {};
  // Optional: how far the probe is, 0..1, for the progress display's ETA
  // (without it the ETA is reckoned from budget_s and the time spent).
  std::function<void(double done_fraction)> progress_fraction = [](double) {};
  // Optional: what the device's drivers say at this moment (clocks,
  // temperature, power, throttle reasons); unset where nobody reads them.
  // May be called from another thread than the probe's while it launches.
  std::function<std::vector<DriverSnapshot>()> driver_facts = nullptr;

  // budget_s, starting now, on the device's budget clock: wall time on a real
  // device, modelled time on the sim (Device::budget_clock_s).
  TimeBudget budget() const { return budget_for(budget_s); }
  TimeBudget budget_for(double seconds) const {
    const Device* d = &device;
    return TimeBudget(seconds, [d] { return d->budget_clock_s(); });
  }
};

struct ProbeDef {
  std::string name;
  std::string summary;
  // Planned wall time on a GPU; the default run of all probes is planned to
  // fit in 90 s there. A probe spends its budget on refinement only after
  // its coarse sweep, so a slow device gets a coarser answer, not a hang.
  double budget_s = 0;
  std::function<std::vector<Series>(ProbeContext&)> run;
  // Builds the probe's costliest kernels through Device::build_ahead, from
  // the device's description and the options alone; unset for probes whose
  // builds are cheap or depend on what they measure. A run on a GPU calls
  // it on a thread of its own while the probes before this one run.
  std::function<void(Device&, const ProbeOptions&)> build_ahead = nullptr;
};

// The budget `def` gets on `device` under `options`: its plan, scaled by
// --budget-scale, 0.4x for --quick, and 2.5x on CPU devices, whose set-up
// (permutations, copies) runs on the same few cores as the kernels.
double planned_budget_s(const ProbeDef& def, const ProbeOptions& options, const DeviceInfo& device);

// Every probe compiled in, in the order a default run runs them.
const std::vector<ProbeDef>& probe_registry();

// Throws UsageError naming the valid probes.
const ProbeDef& find_probe(const std::string& name);

// Every "type.op" the compute and oplatency probes know (--ops), and the
// keys --compute-plan accepts with each one's largest value.
std::vector<std::string> compute_op_names();
const std::map<std::string, int64_t>& compute_plan_limits();

// Probe entry points (one file each).
std::vector<Series> run_latency_probe(ProbeContext& ctx);
std::vector<Series> run_bandwidth_probe(ProbeContext& ctx);
std::vector<Series> run_local_probe(ProbeContext& ctx);
std::vector<Series> run_texture_probe(ProbeContext& ctx);
std::vector<Series> run_coalescing_probe(ProbeContext& ctx);
std::vector<Series> run_tlb_probe(ProbeContext& ctx);
std::vector<Series> run_geometry_probe(ProbeContext& ctx);
std::vector<Series> run_transfer_probe(ProbeContext& ctx);
std::vector<Series> run_launch_probe(ProbeContext& ctx);
std::vector<Series> run_atomics_probe(ProbeContext& ctx);
std::vector<Series> run_scheduling_probe(ProbeContext& ctx);
std::vector<Series> run_clock_probe(ProbeContext& ctx);
std::vector<Series> run_compute_probe(ProbeContext& ctx);
std::vector<Series> run_oplatency_probe(ProbeContext& ctx);
std::vector<Series> run_matrix_probe(ProbeContext& ctx);
std::vector<Series> run_divergence_probe(ProbeContext& ctx);
std::vector<Series> run_occupancy_probe(ProbeContext& ctx);
std::vector<Series> run_icache_probe(ProbeContext& ctx);
std::vector<Series> run_lbm_probe(ProbeContext& ctx);
std::vector<Series> run_sustain_probe(ProbeContext& ctx);

// ProbeDef::build_ahead of the probes that have one.
void build_bandwidth_ahead(Device& dev, const ProbeOptions& options);
void build_compute_ahead(Device& dev, const ProbeOptions& options);
void build_oplatency_ahead(Device& dev, const ProbeOptions& options);
void build_matrix_ahead(Device& dev, const ProbeOptions& options);
void build_occupancy_ahead(Device& dev, const ProbeOptions& options);
void build_icache_ahead(Device& dev, const ProbeOptions& options);
void build_lbm_ahead(Device& dev, const ProbeOptions& options);

}  // namespace gpuscope
