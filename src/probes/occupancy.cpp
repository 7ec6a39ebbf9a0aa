// Probe `occupancy`: how many waves a compute unit keeps resident, and how
// that falls as each work-item holds more registers or each work-group more
// local memory (the Mali-G52 article: "more than 32 registers halves occupancy").
//
// Shape of the experiment, and why (occupancy.cl says why the kernel looks
// as it does):
// - The kernel is latency-bound: each wave has one dependent load in flight,
//   so throughput is proportional to the waves resident.
// - occupancy.waves: time per step stays flat while every work-group
//   launched is resident and doubles once some wait for a second round.
//   Work-items resident per unit over the wave width give the waves. A
//   unit's limit on work-groups must not bind first (Mali-G52 holds 4
//   groups, 48 waves of 8: 64-item groups would stop at 32 waves), so on
//   GPUs the launches are of 1, 2, 3, ... groups of the largest size per
//   unit; then the most groups of one wave resident at once is found, and
//   the step between the last launch that fits and the first that does not
//   is bisected over the wave totals that many groups or fewer can make
//   (a drawn GPU with 72 slots and 8 groups: 3 groups of 24 waves fit, 3
//   of 25 do not). On CPUs, 1, 2, 4, ... groups of 64, then bisected.
// - occupancy.registers: one build per REGS value; each launch holds many
//   rounds of work-groups (at least 16 at full occupancy) so the rounding of
//   the last round costs at most a few percent. The registers the driver
//   says each build used are recorded where it says them (kernel_resources:
//   on NVIDIA, ptxas' report), with spills.
// - occupancy.local: the same kernel with more local memory per group (the
//   only builds with a local argument: scratch = true).
// - Each launch's outputs are checked for a sample of work-groups, every
//   lane's value, from the host's own cycle (occupancy_twin::CycleIndex:
//   the walk summed over the cycle's order; checking every group would take
//   the host longer than the device).
#include "analysis/execution.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "kernels/occupancy_twin.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <map>
#include <numeric>

namespace gpuscope {
namespace {

constexpr uint32_t kStartSpacing = 7919;  // slots between work-groups' starting points (a prime)
constexpr size_t kCheckedGroups = 16;

// The live-value counts of the register sweep, in the order it measures them.
std::vector<int> register_counts(bool quick, bool gpu) {
  // PoCL compiles the fully unrolled chase slowly (seconds per build past 16
  // values), and a CPU has no occupancy to lose: a few points.
  if (!gpu) return {4, 8, 16};
  // Coarse first, then the points between: a budget that runs out costs
  // resolution, not range.
  if (quick) return {8, 32, 64, 128};
  return {8, 32, 48, 64, 96, 128, 184, 16, 40, 56, 72, 80, 112, 152, 216};
}

std::vector<KernelSpec> register_specs(const std::vector<int>& counts) {
  std::vector<KernelSpec> specs;
  for (int r : counts) specs.push_back({"occupancy", "occupancy", {{"regs", r}, {"scratch", false}}});
  return specs;
}

// The work-group of the register sweep's launches.
size_t sweep_group(const DeviceInfo& info) { return std::min<size_t>(64, info.max_work_group_size); }

class OccupancyProbe {
 public:
  explicit OccupancyProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    // Anything but a CPU is treated as a GPU, as the other probes do (a
    // simulated GPU reports type "sim").
    gpu_ = info_.type != "cpu";
    // A cycle larger than any first-level cache (4 MiB) on GPUs; on CPUs one
    // past L2-sized private caches is plenty and cheaper to build.
    const uint32_t n = gpu_ ? (1u << 20) : (1u << 16);
    build_cycle(n);
    next_ = dev_.create_buffer(n * sizeof(uint32_t));
    dev_.write_values<uint32_t>(*next_, next_host_);
    wg_ = sweep_group(info_);
  }

  std::vector<Series> run() {
    const bool quick = ctx_.options.quick;
    TimeBudget budget = ctx_.budget();
    std::vector<Series> out;

    // Registers.
    const std::vector<int> regs_list = register_counts(quick, gpu_);
    Series regs = series("occupancy.registers", {"live values", "per work-item"}, {"throughput", "Gstep/s"});
    regs.meta["kernels"] = nlohmann::json::array();
    dev_.prebuild(register_specs(regs_list), LaunchShape{Range::d1(wg_), Range::d1(wg_)});
    for (int r : regs_list) {
      // The register sweep may take 45% of the budget; the waves and local
      // memory sweeps need the rest (on the H200 they take ~4 s whatever
      // the budget: 10 wave points and 3 local points always run).
      if (budget.elapsed_s() > 0.45 * budget.total_s() && regs.points.size() >= 3) {
        regs.meta["budget_note"] = fmt::format("the budget ran out before {} live values", r);
        break;
      }
      nlohmann::json facts;
      Kernel& k = build(r, &facts);
      regs.meta["kernels"].push_back(facts);
      // A build too large for a work-group of wg_ (the driver caps the
      // group by registers on some GPUs) ends the sweep: occupancy is
      // already at its floor there.
      if (k.max_work_group_size() < wg_) {
        regs.meta["stopped"] = fmt::format("{} live values: the kernel's largest work-group ({}) is below {}",
                                           r, k.max_work_group_size(), wg_);
        break;
      }
      measure_rate(regs, k, r, 0, static_cast<double>(r));
    }
    out.push_back(regs);

    // Waves per unit, with few registers.
    Kernel& small = build(8, nullptr);
    Series waves = series("occupancy.waves", {"work-items per compute unit", ""}, {"step time", "ns"});
    waves.meta["regs"] = 8;
    wave_multiple_ = dev_.kernel_resources(small).preferred_work_group_multiple;
    waves.meta["wave_width_assumed"] = wave_multiple_;
    measure_waves(waves, small, quick);
    out.push_back(waves);

    // Local memory per work-group.
    std::vector<size_t> local_list =
        quick ? std::vector<size_t>{256, 4096, 16384}
              : std::vector<size_t>{256, 4096, 8192, 12288, 16384, 24576, 32768, 49152};
    const size_t local_cap = std::min<size_t>(info_.local_mem_bytes, 64 * 1024);
    Series local = series("occupancy.local", {"local memory", "B"}, {"throughput", "Gstep/s"});
    local.meta["regs"] = 8;
    Kernel& scratch = build(8, nullptr, true);
    for (size_t bytes : local_list) {
      bytes = std::max(bytes, wg_ * sizeof(uint32_t));
      if (bytes > local_cap) break;
      if (budget.exhausted() && local.points.size() >= 3) {
        local.meta["budget_note"] = fmt::format("the budget ran out before {} B", bytes);
        break;
      }
      measure_rate(local, scratch, 8, bytes, static_cast<double>(bytes));
    }
    out.push_back(local);
    for (auto& s : out) s.meta["wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  Series series(const std::string& id, Axis x, Axis y) const {
    return make_series(id, "occupancy", std::move(x), std::move(y),
                       {{"kernel", "occupancy/occupancy"},
                        {"work_group_size", wg_},
                        {"cycle_slots", next_host_.size()},
                        {"pattern", "one random cycle chased by all lanes of a work-group together"}});
  }

  void build_cycle(uint32_t n) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    SplitMix64 rng(0x0cc0ba11u ^ n);
    for (uint32_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    next_host_.assign(n, 0);
    for (uint32_t k = 0; k < n; ++k) next_host_[order[k]] = order[(k + 1) % n];
    cycle_index_ = occupancy_twin::CycleIndex(next_host_);
  }

  Kernel& build(int regs, nlohmann::json* facts, bool scratch = false) {
    Kernel& k = dev_.kernel({"occupancy", "occupancy", {{"regs", regs}, {"scratch", scratch}}});
    if (facts) {
      const KernelResources res = dev_.kernel_resources(k);
      (*facts)["regs"] = regs;
      (*facts)["private_mem_bytes"] = res.private_mem_bytes;
      (*facts)["max_work_group_size"] = res.max_work_group_size;
      if (res.registers) {
        (*facts)["registers_used"] = *res.registers;
        (*facts)["registers_source"] = res.registers_source;
      }
    }
    return k;
  }

  // The host's walk of one work-group: every lane's output.
  std::vector<uint32_t> expected_group(uint64_t group, int regs, uint32_t steps, size_t wg) {
    const auto n = static_cast<uint32_t>(next_host_.size());
    const auto start = static_cast<uint32_t>((group * kStartSpacing) % n);
    return cycle_index_.group_outputs(start, regs, steps, static_cast<uint32_t>(wg));
  }

  // One launch of `groups` work-groups of `wg` work-items, `steps` x REGS
  // chase steps each, with `local_bytes` of local memory per group (a
  // SCRATCH build) or none (0); checks kCheckedGroups groups spread over
  // the launch.
  double launch(Kernel& k, int regs, size_t groups, size_t wg, uint32_t steps, size_t local_bytes) {
    const KernelArg args[] = {next_.get(), out_for(groups * wg).get(), kStartSpacing,
                              static_cast<uint32_t>(next_host_.size()), steps};
    const double ns = dev_.launch(k, {Range::d1(groups * wg), Range::d1(wg), local_bytes}, args);
    for (size_t c = 0; c < std::min(groups, kCheckedGroups); ++c) {
      const size_t g = c * groups / std::min(groups, kCheckedGroups);
      const auto got = dev_.read_values<uint32_t>(*out_, wg, g * wg);
      if (got != expected_group(g, regs, steps, wg))
        throw ValidationError(
            fmt::format("occupancy: work-group {} of {} (REGS={}, {} steps) computed other values "
                        "than the host's walk",
                        g, groups, regs, steps));
    }
    return ns;
  }

  std::unique_ptr<Buffer>& out_for(size_t items) {
    if (!out_ || out_->size_bytes() < items * sizeof(uint32_t)) out_ = dev_.create_buffer(items * sizeof(uint32_t));
    return out_;
  }

  // Work-groups per launch for rates: 16 rounds of 2048 work-items per unit
  // on GPUs (the most any GPU we know keeps resident), so rounding of the
  // last round stays within a few percent; two per hardware thread on CPUs.
  size_t rate_groups() const {
    const size_t cus = std::max<uint32_t>(1, info_.compute_units);
    return gpu_ ? cus * 16 * 2048 / wg_ : cus * 2;
  }

  void measure_rate(Series& s, Kernel& k, int regs, size_t local_bytes, double x) {
    const size_t groups = rate_groups();
    // Start from the previous point's work per launch, scaled to this
    // unrolling: one calibration launch usually lands.
    const uint64_t initial = std::max<uint64_t>(1, last_lane_steps_ / static_cast<uint64_t>(regs));
    const Measurement m = measure(
        [&](uint64_t steps) { return launch(k, regs, groups, wg_, static_cast<uint32_t>(steps), local_bytes); },
        std::min(initial, max_steps()), max_steps(), ctx_.options.harness);
    last_lane_steps_ = m.work_per_launch * static_cast<uint64_t>(regs);
    const double lane_steps = static_cast<double>(groups * wg_) * regs;
    const double y = add_rate_point(s, x, m.ns_per_unit, lane_steps);
    ctx_.progress(fmt::format("{} {:>6g}  {:8.2f} Gstep/s  (spread {:.1f}%, {:.1f} ms launches)", s.id, x, y, 100 * m.summary.rel_spread, m.launch_ms));
  }

  // Chase steps per launch: the kernel's one loop runs them.
  uint64_t max_steps() const { return loop_trip_cap(info_.features, 1u << 20, 8); }

  // A launch of `groups_per_cu` groups of `wg` per compute unit: its point
  // (x = work-items per unit), inserted into `s` unless `s` is null.
  Point wave_point(Series* s, Kernel& k, size_t groups_per_cu, size_t wg) {
    const size_t groups = groups_per_cu * std::max<uint32_t>(1, info_.compute_units);
    const Measurement m = measure(
        [&](uint64_t steps) { return launch(k, 8, groups, wg, static_cast<uint32_t>(steps), 0); },
        std::min(last_wave_steps_, max_steps()), max_steps(), ctx_.options.harness);
    last_wave_steps_ = m.work_per_launch;
    Point p;
    p.x = static_cast<double>(groups_per_cu * wg);
    p.samples = m.ns_per_unit;
    p.y = m.summary.median;
    if (s) insert_point(*s, p);
    ctx_.progress(fmt::format("occupancy.waves {:>6g} ({} x {})  {:8.1f} ns/step  (spread {:.1f}%)", p.x,
                              groups_per_cu, wg, p.y, 100 * m.summary.rel_spread));
    return p;
  }

  // The largest work-group the build runs, in whole 64s when it is that
  // large (the wave widths known divide 64), at most 1024.
  size_t largest_group(Kernel& k) const {
    size_t g = std::min<size_t>({k.max_work_group_size(), info_.max_work_group_size, 1024});
    if (g >= 64) g -= g % 64;
    return std::max<size_t>(g, 1);
  }

  // GPUs: 1, 2, 3, ... groups of the largest size per unit until the step
  // time jumps, then the step between refined (refine_waves), up to 32768
  // work-items per unit: twice what a unit of the recovery benchmark's
  // widest draw holds (4 schedulers of 32 waves of 128 lanes, 16384
  // items), whose step shows only past that. CPUs: doubling 64-item groups
  // from 1, then bisection (bisect_groups), up to 16384 work-items per unit.
  void measure_waves(Series& s, Kernel& k, bool quick) {
    const size_t big = gpu_ ? largest_group(k) : wg_;
    const size_t most_items = gpu_ ? 32768 : 16384;
    s.meta["work_group_size"] = big;
    size_t lo = 1, hi = 0;
    wave_point(&s, k, 1, big);
    for (size_t n = 2; n * big <= most_items; n = gpu_ ? n + 1 : 2 * n) {
      if (over(s, wave_point(&s, k, n, big))) {
        hi = n;
        break;
      }
      lo = n;
    }
    if (quick || hi == 0) return;
    if (gpu_)
      refine_waves(s, k, big, lo, hi);
    else
      bisect_groups(s, k, lo, hi);
  }

  // CPUs: between `lo` groups of wg_ per unit (resident) and `hi` (not).
  void bisect_groups(Series& s, Kernel& k, size_t lo, size_t hi) {
    while (hi > lo + 1) {
      const size_t mid = (lo + hi) / 2;
      (over(s, wave_point(&s, k, mid, wg_)) ? hi : lo) = mid;
    }
  }

  // GPUs: `lo` groups of `big` work-items per unit are resident at once and
  // `hi` are not. A unit's limit on work-groups can bind before its wave
  // slots do, so that step bounds the slots only if `hi` groups can be
  // resident at all, and groups of `big` tell the slots only to `big`
  // items. Two searches settle both, in waves of w work-items (the build's
  // preferred work-group multiple):
  //  1. the most groups of one wave resident at once, N (the work-group
  //     limit, or the slots if fewer): doubling from `hi`, then bisected,
  //     up to as many as `hi` x `big` holds;
  //  2. the slots, bisected over the totals t = n x k waves that n <= N
  //     groups of k waves each (k w <= big) make between what fitted and
  //     what did not: N groups being resident, such a launch waits only for
  //     want of slots. Each total is made with the fewest groups.
  // The series gains the launches of the second search (the groups of one
  // wave, whose step time need not match a full group's, stay out of it),
  // and the meta says what was done.
  void refine_waves(Series& s, Kernel& k, size_t big, size_t lo, size_t hi) {
    const size_t w = wave_multiple_;
    if (w < 2 || big % w != 0) {
      s.meta["refinement"] = fmt::format(
          "not made: the build's preferred work-group multiple ({}) does not "
          "divide the largest group ({})",
          w, big);
      return;
    }
    const size_t kmax = big / w, cap = hi * kmax;
    size_t n_fit = lo, n_over = 0;  // lo groups of big fit, so lo groups of one wave do
    for (size_t m = std::min(hi, cap);; m = std::min(2 * m, cap)) {
      if (over(s, wave_point(nullptr, k, m, w))) {
        n_over = m;
        break;
      }
      n_fit = m;
      if (m == cap) break;
    }
    while (n_over > n_fit + 1) {
      const size_t mid = (n_fit + n_over) / 2;
      (over(s, wave_point(nullptr, k, mid, w)) ? n_over : n_fit) = mid;
    }
    const auto groups = [](size_t n) { return fmt::format("{} group{}", n, n == 1 ? "" : "s"); };
    std::string log = fmt::format("{} of one wave ({} work-items) resident at once", groups(n_fit), w);
    log += n_over ? fmt::format(", {} not; ", groups(n_over)) : "; ";
    // Past N groups no launch holds more than N x kmax waves, so `hi`
    // groups of `big` bound the waves a kernel can hold either way: by the
    // slots where hi <= N, by the work-group limit where not. The search
    // covers the totals N groups can make below that bound.
    const size_t fit_waves = std::max(lo * kmax, n_fit), over_waves = std::min(hi, n_fit + 1) * kmax;
    std::map<size_t, size_t> groups_for;  // total waves -> the fewest groups making it
    for (size_t n = 1; n <= n_fit; ++n)
      for (size_t kw = 1; kw <= kmax; ++kw)
        if (const size_t t = n * kw; t > fit_waves && t < over_waves) groups_for.try_emplace(t, n);
    std::vector<size_t> totals;
    for (const auto& [t, n] : groups_for) totals.push_back(t);
    // totals[a] fits (a = -1: none tried yet), totals[b] does not.
    std::ptrdiff_t a = -1, b = static_cast<std::ptrdiff_t>(totals.size());
    size_t best = fit_waves, worst = hi * kmax;
    while (b - a > 1) {
      const std::ptrdiff_t mid = (a + b) / 2;
      const size_t t = totals[static_cast<size_t>(mid)], n = groups_for[t];
      if (over(s, wave_point(&s, k, n, t / n * w))) {
        b = mid;
        worst = t;
      } else {
        a = mid;
        best = t;
      }
    }
    log += fmt::format("{} waves fit and {} do not", best, worst);
    if (hi > n_fit)
      log += fmt::format(" (no more than {} resident at once: at most {} waves in groups of {})",
                         groups(n_fit), n_fit * kmax, big);
    s.meta["refinement"] = log;
  }

  // A launch is over capacity when its step time is half again the first point's.
  static bool over(const Series& s, const Point& p) { return p.y > 1.5 * s.points.front().y; }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  bool gpu_ = true;
  size_t wg_ = 64;
  size_t wave_multiple_ = 0;  // the waves search's build's preferred work-group multiple
  uint64_t last_lane_steps_ = 8, last_wave_steps_ = 4;  // previous points' work per launch
  std::vector<uint32_t> next_host_;
  // next_host_'s one cycle, indexed: the host's walk of a group in O(REGS^2)
  // (the sim tests check it against the hop-by-hop walk).
  occupancy_twin::CycleIndex cycle_index_;
  std::unique_ptr<Buffer> next_, out_;
};

}  // namespace

std::vector<Series> run_occupancy_probe(ProbeContext& ctx) { return OccupancyProbe(ctx).run(); }

void build_occupancy_ahead(Device& dev, const ProbeOptions& options) {
  const DeviceInfo& info = dev.info();
  const size_t wg = sweep_group(info);
  dev.build_ahead(register_specs(register_counts(options.quick, info.type != "cpu")),
                  LaunchShape{Range::d1(wg), Range::d1(wg)});
}

}  // namespace gpuscope
