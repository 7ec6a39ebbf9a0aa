// Probes `compute` (arithmetic throughput per type and op) and `oplatency`
// (dependent-chain latency per type and op), both on src/kernels/opencl/compute.cl,
// whose header says why its kernels have the shape they have.
//
// compute: for every (type, op) of the matrix, CHAINS independent chains per
// work-item over enough work-items to fill every compute unit several times
// over, timed by the harness; the series "compute.<type>.<op>" has one point
// per vector form (x = values per operation: 1 scalar, 2 packed half2, 4
// float4), y = Gop/s (an FMA is one op; analysis doubles it for FLOP/s).
// Two mixes test dual issue.
// oplatency: one work-item, one chain; "oplatency.<type>.<op>", x = 1, y = ns
// per op, and the core's own cycle counter read around the chain where the
// device offers one that passes check_cycle_counter (probes/cycle_counter.hpp:
// %clock64 through PTX on NVIDIA's OpenCL, the subgroup clock through Vulkan).
//
// Before timing, each (form, op) runs once with one loop trip and the host
// checks every lane of the first work-items (and the last one) against the
// twin's evaluation of the same maps: the binary that is timed has been
// shown to compute them (the trip count is a kernel argument, so the
// compiler cannot specialise the timed launches).
#include "core/error.hpp"
#include "probes/compute/compute_probe.hpp"
#include "probes/cycle_counter.hpp"
#include "probes/loop_trips.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>

namespace gpuscope {
namespace compute_probe {
namespace {

// The first line of a build log that names an error, else its start.
std::string first_line(const std::string& log) {
  for (size_t pos = 0; pos < log.size();) {
    const size_t end = log.find('\n', pos);
    std::string line = log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.find("error") != std::string::npos) return line.substr(0, 300);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return log.substr(0, 300);
}

const twin::Op& op_named(const std::string& name) {
  const twin::Op* op = twin::find_op(name);
  if (!op) throw std::logic_error("compute: unknown op " + name);
  return *op;
}

// The kernels `entries` launch on a device that offers `reach`, and the
// launch shape they are built for: the prebuild's and the build ahead's.
std::pair<std::vector<KernelSpec>, LaunchShape> selection_kernels(const DeviceInfo& info, const Plan& plan,
                                                                  const Reach& reach,
                                                                  const std::vector<Entry>& entries,
                                                                  bool throughput) {
  std::vector<KernelSpec> specs;
  for (const auto& e : entries) {
    const twin::Op& op = op_named(e.op);
    if (!op_unsupported(op, reach).empty()) continue;
    std::vector<int> lanes = e.lanes;
    if (!throughput) lanes = {std::string_view(e.type) == "fp16" && !info.features.fp16 ? 2 : 1};
    for (int l : lanes) {
      auto fv = choose_form(e.type, l, reach);
      if (const Form* f = std::get_if<Form>(&fv)) specs.push_back(kernel_spec(*f, op, throughput, plan, reach.ptx));
    }
  }
  const size_t local = throughput ? std::min<size_t>(plan.local, info.max_work_group_size) : 1;
  return {std::move(specs), LaunchShape{Range::d1(throughput ? plan.global : 1), Range::d1(local)}};
}

// What a device offers before anything is built: inline PTX where it takes
// it (a driver may still reject it, which ComputeRunner finds).
Reach initial_reach(const DeviceInfo& info) {
  return {info.features.fp64, info.features.fp16, info.features.integer_dot_product,
          info.features.inline_asm == "nvidia-ptx", info.features.isa_version};
}

class ComputeRunner {
 public:
  ComputeRunner(ProbeContext& ctx, std::string probe)
      : ctx_(ctx),
        dev_(ctx.device),
        info_(dev_.info()),
        probe_(std::move(probe)),
        budget_(ctx.budget()),
        plan_(make_plan(info_, ctx.options.quick, ctx.options.compute_plan)) {
    harness_ = ctx.options.harness;
    // Launches of 5 ms swamp launch overhead (~10 us) as well as 10 ms do,
    // and halve the probe's time.
    harness_.target_launch_ms = std::min(harness_.target_launch_ms, 5.0);
    ptx_ = info_.features.inline_asm == "nvidia-ptx";
  }

  // What the device offers now (inline PTX may be found rejected on the way).
  Reach reach() const {
    Reach r = initial_reach(info_);
    r.ptx = ptx_ && ptx_ok_;
    return r;
  }

  // Builds a kernel of `f`. Where the driver rejects inline PTX in a float or
  // integer program, builds again without it (no cycle counter, no dp4a) and
  // says so; any failure to build or to find the kernel is returned as text.
  std::variant<Kernel*, std::string> build(const Form& f, const twin::Op& op, bool throughput) {
    try {
      try {
        return &dev_.kernel(kernel_spec(f, op, throughput, plan_, ptx_ && ptx_ok_));
      } catch (const BuildError& e) {
        if (!ptx_ || !ptx_ok_ || f.kind == Kind::PtxF16x2) throw;
        ptx_ok_ = false;
        ptx_note_ = "inline PTX rejected by the driver (" + first_line(e.log) + "): no cycle counter, no dp4a";
        ctx_.progress(probe_ + ": " + ptx_note_);
        return &dev_.kernel(kernel_spec(f, op, throughput, plan_, false));
      }
    } catch (const BuildError& e) {
      return fmt::format("{} ({} path) did not build: {}", f.key(), f.path, first_line(e.log));
    } catch (const DeviceError& e) {
      return fmt::format("{} ({} path): {}", f.key(), f.path, e.what());
    }
  }

  // Builds every kernel the selection will launch, ahead and in parallel
  // where the backend can (Device::prebuild); those that fail are met, and
  // reported, again when prepare() builds them one by one.
  void prebuild(const std::vector<Entry>& entries, bool throughput) {
    const auto [specs, shape] = selection_kernels(info_, plan_, reach(), entries, throughput);
    dev_.prebuild(specs, shape);
  }

  // Runs the clock up before timing: GPUs start a burst at a low clock and
  // raise it over tens to hundreds of ms.
  void warm_clock(double seconds) {
    const twin::Op& fma = op_named("fma");
    auto f = std::get<Form>(choose_form("fp32", 1, reach()));
    auto built = build(f, fma, true);
    if (!std::holds_alternative<Kernel*>(built)) return;  // the matrix will say why
    Kernel& k = *std::get<Kernel*>(built);
    auto bufs = make_buffers(dev_, f, fma, plan_, plan_.global);
    const TimeBudget t = ctx_.budget_for(seconds);
    uint32_t iters = 1;
    while (!t.exhausted()) {
      const double ns = launch_tp(k, bufs, iters);
      if (ns < 20e6) iters *= 2;
    }
  }

  double launch_tp(Kernel& k, Buffers& b, uint32_t iters) {
    const KernelArg args[] = {b.seed.get(), b.param.get(), b.out.get(), iters, b.pa, b.pb};
    return dev_.launch(k, Range::d1(plan_.global), Range::d1(std::min(plan_.local, k.max_work_group_size())),
                       std::span<const KernelArg>(args, b.by_value ? 6 : 4));
  }

  double launch_lat(Kernel& k, Buffers& b, uint32_t iters) {
    const KernelArg args[] = {b.seed.get(), b.param.get(), b.out.get(), b.cycles.get(), iters};
    return dev_.launch(k, Range::d1(1), Range::d1(1), args);
  }

  // Checks one trip of tp_<op> on the first work-item and the last.
  void validate_tp(const Form& f, const twin::Op& op, Kernel& k, Buffers& b) {
    launch_tp(k, b, 1);
    const size_t item_bytes = 2 * plan_.chains * f.lanes() * scalar_bytes(f.lane);
    std::vector<std::byte> got(item_bytes);
    for (size_t item : {size_t{0}, plan_.global - 1}) {
      dev_.read(*b.out, item * item_bytes, got);
      check_lanes(probe_, f, op, twin::load_block(op, f.lane, got),
                  reference(f, op, plan_, b, item, plan_.steps(op), true), fmt::format("work-item {}", item));
    }
  }

  // The latency kernel runs chain 0 of work-item 0 only.
  void validate_lat(const Form& f, const twin::Op& op, Kernel& k, Buffers& b) {
    launch_lat(k, b, 1);
    const size_t lanes2 = 2 * f.lanes();
    std::vector<std::byte> got(lanes2 * scalar_bytes(f.lane));
    dev_.read(*b.out, 0, got);
    auto want = reference(f, op, plan_, b, 0, plan_.lat_steps(op), false);
    want.resize(lanes2);
    check_lanes(probe_, f, op, twin::load_block(op, f.lane, got), want, "the latency chain");
  }

  // The form and kernel of (type, op), or nothing when it cannot run (the
  // reason recorded; a latency series is recorded as values_per_op 1).
  std::optional<std::pair<Form, Kernel*>> prepare(const std::string& id, const std::string& type,
                                                  const twin::Op& op, int lanes, bool throughput) {
    const int noted_lanes = throughput ? lanes : 1;
    auto fv = choose_form(type, lanes, reach());
    if (auto* reason = std::get_if<std::string>(&fv)) {
      unsupported(id, noted_lanes, *reason);
      return std::nullopt;
    }
    const Form& f = std::get<Form>(fv);
    if (const std::string why = op_unsupported(op, reach()); !why.empty()) {
      unsupported(id, noted_lanes, why);
      return std::nullopt;
    }
    auto built = build(f, op, throughput);
    if (auto* reason = std::get_if<std::string>(&built)) {
      unsupported(id, noted_lanes, *reason);
      return std::nullopt;
    }
    return std::make_pair(f, std::get<Kernel*>(built));
  }

  // compute: one point per form of (type, op).
  void throughput(const std::string& type, const twin::Op& op, const std::vector<int>& lane_counts,
                  std::vector<Series>& out) {
    const std::string ftype = finding_type(type, op);
    const std::string id = fmt::format("compute.{}.{}", ftype, op.name);
    for (int lanes : lane_counts) {
      if (budget_.exhausted()) {
        not_measured_.push_back(fmt::format("{} x{}", id, lanes));
        continue;
      }
      auto prepared = prepare(id, type, op, lanes, true);
      if (!prepared) continue;
      const Form& f = prepared->first;
      Kernel* k = prepared->second;
      Buffers b = make_buffers(dev_, f, op, plan_, plan_.global);
      validate_tp(f, op, *k, b);
      const double ops_per_iter =
          static_cast<double>(plan_.global) * plan_.steps(op) * plan_.chains * 2 * f.lanes();
      const Measurement m = measure([&](uint64_t iters) { return launch_tp(*k, b, static_cast<uint32_t>(iters)); },
                                    1, loop_trip_cap(info_.features, UINT32_MAX, 8), harness_);
      std::vector<double> gops;
      for (double ns_per_iter : m.ns_per_unit) gops.push_back(ops_per_iter / ns_per_iter);
      Series& s = series_in(out, id, "compute", {"values_per_op", ""}, {"throughput", "Gop/s"});
      const double y = add_point(s, f.lanes(), std::move(gops));
      s.meta["type"] = ftype;
      s.meta["op"] = op.name;
      s.meta["flop_per_op"] = op.flop_per_op;
      s.meta["counted"] = op.counted;
      s.meta["kernel"] = std::string("compute/tp_") + op.kernel;
      if (!s.meta.contains("forms")) s.meta["forms"] = nlohmann::json::array();
      s.meta["forms"].push_back({{"values_per_op", f.lanes()},
                                 {"elem", f.elem()},
                                 {"path", f.path},
                                 {"chains_per_work_item", plan_.chains},
                                 {"steps_per_trip", plan_.steps(op)},
                                 {"global", plan_.global},
                                 {"local", std::min(plan_.local, k->max_work_group_size())},
                                 {"trips_per_launch", m.work_per_launch},
                                 {"launch_ms", m.launch_ms},
                                 {"outliers", m.summary.outliers}});
      ctx_.progress(fmt::format("compute {:<6} {:<14} x{:<2} {:10.1f} Gop/s  (spread {:.1f}%)", type, op.name,
                                f.lanes(), y, 100 * m.summary.rel_spread));
    }
  }

  // Whether the lat_ kernels' cycle counter counts cycles: checked once,
  // where the device offers one (lat_ kernels read it through PTX on
  // NVIDIA's OpenCL, and wherever the device has a subgroup clock in GLSL).
  bool counter_usable() {
    if (!counter_checked_) {
      counter_checked_ = true;
      if (info_.features.cycle_counter) {
        const CounterVerdict v = check_cycle_counter(dev_);
        counter_ok_ = v.usable;
        if (!v.usable)
          counter_note_ =
              "the cycle counter (" + describe_cycle_counter(info_.features, info_.vendor) + ") is not used: " + v.why;
      }
    }
    return counter_ok_;
  }

  // oplatency: one work-item, one chain.
  void latency(const std::string& type, const twin::Op& op, std::vector<Series>& out) {
    const std::string ftype = finding_type(type, op);
    const std::string id = fmt::format("oplatency.{}.{}", ftype, op.name);
    if (budget_.exhausted()) {
      not_measured_.push_back(id);
      return;
    }
    // Without half arithmetic the PTX path's packed half2 is the only fp16 form.
    auto prepared = prepare(id, type, op, type == "fp16" && !info_.features.fp16 ? 2 : 1, false);
    if (!prepared) return;
    const Form& f = prepared->first;
    Kernel* k = prepared->second;
    Buffers b = make_buffers(dev_, f, op, plan_, 1);
    validate_lat(f, op, *k, b);
    const double ops_per_iter = plan_.lat_steps(op) * 2.0;
    std::vector<std::pair<uint64_t, uint64_t>> cycles;  // (trips, cycles) of every launch
    const bool counter = counter_usable() && (!ptx_ || ptx_ok_);
    const Measurement m = measure(
        [&](uint64_t iters) {
          const double ns = launch_lat(*k, b, static_cast<uint32_t>(iters));
          if (counter) cycles.emplace_back(iters, dev_.read_values<uint64_t>(*b.cycles, 1)[0]);
          return ns;
        },
        1, loop_trip_cap(info_.features, UINT32_MAX, 8), harness_);
    Series s = make_series(id, "oplatency", {"chains", ""}, {"latency", "ns"});
    std::vector<double> ns_per_op;
    for (double ns_per_iter : m.ns_per_unit) ns_per_op.push_back(ns_per_iter / ops_per_iter);
    const double y = add_point(s, 1, std::move(ns_per_op));
    s.meta = {{"type", ftype},
              {"op", op.name},
              {"counted", op.counted},
              {"path", f.path},
              {"kernel", std::string("compute/lat_") + op.kernel},
              {"ops_per_trip", ops_per_iter},
              {"trips_per_launch", m.work_per_launch},
              {"launch_ms", m.launch_ms},
              {"clock_mhz_reported", info_.clock_mhz}};
    if (counter && !cycles.empty()) {
      // The timed launches are the last ones; their counters give cycles per
      // op on the SM's own clock (no assumption about the clock).
      std::vector<double> cyc;
      for (size_t i = cycles.size() - m.ns_per_unit.size(); i < cycles.size(); ++i)
        cyc.push_back(static_cast<double>(cycles[i].second) / (static_cast<double>(cycles[i].first) * ops_per_iter));
      s.meta["cycles_per_op"] = cyc;
      s.meta["cycle_counter"] = describe_cycle_counter(info_.features, info_.vendor) + ", read before and after the chain";
    } else if (!counter_note_.empty()) {
      s.meta["cycle_counter_not_used"] = counter_note_;
    }
    ctx_.progress(fmt::format("oplatency {:<6} {:<14} {:8.3f} ns", type, op.name, y));
    out.push_back(std::move(s));
  }

  Series summary_series(const std::string& id) {
    Series s = make_series(id, probe_, {"none", ""}, {"none", ""});
    s.meta = {{"unsupported", unsupported_},
              {"inline_ptx", ptx_ ? (ptx_ok_ ? "accepted" : ptx_note_) : "the device takes no NVIDIA PTX"},
              {"not_measured_time_budget", not_measured_},
              {"wall_s", budget_.elapsed_s()},
              {"budget_s", budget_.total_s()},
              {"plan",
               {{"chains", plan_.chains},
                {"unroll", plan_.unroll},
                {"unroll_slow", plan_.unroll_slow},
                {"lat_unroll", plan_.lat_unroll},
                {"lat_unroll_slow", plan_.lat_unroll_slow},
                {"global", plan_.global},
                {"local", plan_.local}}}};
    return s;
  }

 private:
  void unsupported(const std::string& id, int lanes, const std::string& reason) {
    unsupported_.push_back({{"series", id}, {"values_per_op", lanes}, {"reason", reason}});
    ctx_.progress(fmt::format("{}: {} x{} unsupported: {}", probe_, id, lanes, reason));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  std::string probe_;
  TimeBudget budget_;
  Plan plan_;
  HarnessConfig harness_;
  bool ptx_ = false;  // kernels may hold NVIDIA inline PTX
  bool ptx_ok_ = true;
  std::string ptx_note_;
  bool counter_checked_ = false, counter_ok_ = false;
  std::string counter_note_;  // why the device's cycle counter is not used
  nlohmann::json unsupported_ = nlohmann::json::array();
  nlohmann::json not_measured_ = nlohmann::json::array();
};

bool selected(const ProbeOptions& o, const std::string& type, const std::string& op) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), type + "." + op) != o.ops.end();
}

// The matrix a run times: --ops picks from the full one.
std::vector<Entry> selected_entries(const ProbeOptions& o, bool throughput) {
  const bool quick_list = o.quick && o.ops.empty();
  std::vector<Entry> entries;
  for (const auto& e : throughput ? throughput_selection(quick_list) : latency_selection(quick_list))
    if (selected(o, e.type, e.op)) entries.push_back(e);
  return entries;
}

// The kernels run_matrix will build, built on the run's build-ahead thread.
void build_selection_ahead(Device& dev, const ProbeOptions& o, bool throughput) {
  const DeviceInfo& info = dev.info();
  const Plan plan = make_plan(info, o.quick, o.compute_plan);
  const auto [specs, shape] =
      selection_kernels(info, plan, initial_reach(info), selected_entries(o, throughput), throughput);
  dev.build_ahead(specs, shape);
}

// Runs `probe` over its matrix (--ops picks from the full one), after
// `warm_s` (quick: `warm_quick_s`) of clock warm-up on a GPU.
std::vector<Series> run_matrix(ProbeContext& ctx, const std::string& probe, bool throughput, double warm_s,
                               double warm_quick_s) {
  ComputeRunner r(ctx, probe);
  const std::vector<Entry> entries = selected_entries(ctx.options, throughput);
  r.prebuild(entries, throughput);
  if (ctx.device.info().type == "gpu") r.warm_clock(ctx.options.quick ? warm_quick_s : warm_s);
  std::vector<Series> out;
  for (const auto& e : entries) {
    if (throughput)
      r.throughput(e.type, op_named(e.op), e.lanes, out);
    else
      r.latency(e.type, op_named(e.op), out);
  }
  out.push_back(r.summary_series(probe + ".summary"));
  return out;
}

}  // namespace
}  // namespace compute_probe

std::vector<Series> run_compute_probe(ProbeContext& ctx) {
  return compute_probe::run_matrix(ctx, "compute", true, 0.4, 0.1);
}

std::vector<Series> run_oplatency_probe(ProbeContext& ctx) {
  return compute_probe::run_matrix(ctx, "oplatency", false, 0.1, 0.05);
}

void build_compute_ahead(Device& dev, const ProbeOptions& options) {
  compute_probe::build_selection_ahead(dev, options, true);
}

void build_oplatency_ahead(Device& dev, const ProbeOptions& options) {
  compute_probe::build_selection_ahead(dev, options, false);
}

}  // namespace gpuscope
