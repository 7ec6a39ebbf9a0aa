// Probe `occupancy`: how many waves a compute unit keeps resident, and how
// that falls as each work-item holds more registers or each work-group more
// local memory (seed 000: "more than 32 registers halves occupancy").
//
// Shape of the experiment, and why (occupancy.cl says why the kernel looks
// as it does):
// - The kernel is latency-bound: each wave has one dependent load in flight,
//   so throughput is proportional to the waves resident.
// - occupancy.waves: launches of 1, 2, 4, ... work-groups per compute unit
//   (then bisected): time per step stays flat while all are resident and
//   doubles once some wait for a second round. Work-items resident per unit
//   over the wave width give the waves.
// - occupancy.registers: one build per REGS value; each launch holds many
//   rounds of work-groups (at least 16 at full occupancy) so the rounding of
//   the last round costs at most a few percent. The registers the driver
//   says each build used are recorded where it says (NVIDIA: ptxas' report
//   under -cl-nv-verbose), with spills (CL_KERNEL_PRIVATE_MEM_SIZE).
// - occupancy.local: the same kernel with more local memory per group.
// - Each launch's outputs are checked for a sample of work-groups, walked on
//   the host in full (every lane's value): simulating every group would take
//   the host longer than the device.
#include "analysis/execution.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <numeric>
#include <regex>

namespace gpuscope {
namespace {

constexpr uint32_t kStartSpacing = 7919;  // slots between work-groups' starting points (a prime)
constexpr size_t kCheckedGroups = 16;

// Registers the driver reports a build using, from its build log: NVIDIA's
// ptxas prints "Used N registers" under -cl-nv-verbose.
std::optional<double> registers_from_log(const std::string& log) {
  static const std::regex used(R"(Used (\d+) registers)");
  std::smatch m;
  if (std::regex_search(log, m, used)) return std::stod(m[1].str());
  return std::nullopt;
}

// The .reg declarations of a PTX binary: PTX's virtual registers, which
// ptxas maps onto physical ones; shown as what the binary can tell.
std::string ptx_reg_declarations(const std::vector<std::byte>& bin) {
  const std::string text(reinterpret_cast<const char*>(bin.data()), bin.size());
  if (text.find(".version") == std::string::npos) return "";
  std::string out;
  static const std::regex decl(R"(\.reg\s+\.\w+\s+%\w+<\d+>;)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
    out += (out.empty() ? "" : " ") + it->str();
  return out;
}

class OccupancyProbe {
 public:
  explicit OccupancyProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    // Anything but a CPU is treated as a GPU, as the other probes do (a
    // simulated GPU reports type "sim").
    gpu_ = info_.type != "cpu";
    nv_verbose_ = std::find(info_.extensions.begin(), info_.extensions.end(), "cl_nv_compiler_options") !=
                  info_.extensions.end();
    // A cycle larger than any first-level cache (4 MiB) on GPUs; on CPUs one
    // past L2-sized private caches is plenty and cheaper to build.
    const uint32_t n = gpu_ ? (1u << 20) : (1u << 16);
    build_cycle(n);
    next_ = dev_.create_buffer(n * sizeof(uint32_t));
    dev_.write_values<uint32_t>(*next_, next_host_);
    wg_ = std::min<size_t>(64, info_.max_work_group_size);
  }

  std::vector<Series> run() {
    const bool quick = ctx_.options.quick;
    TimeBudget budget(ctx_.budget_s);
    std::vector<Series> out;

    // Registers.
    const std::vector<int> regs_list =
        // PoCL compiles the fully unrolled chase slowly (seconds per build
        // past 16 values), and a CPU has no occupancy to lose: a few points.
        !gpu_   ? std::vector<int>{4, 8, 16}
        : quick ? std::vector<int>{8, 32, 64, 128}  // Coarse first, then the points between: a budget that
                                                    // runs out costs resolution, not range.
                : std::vector<int>{8, 32, 48, 64, 96, 128, 184, 16, 40, 56, 72, 80, 112, 152, 216};
    Series regs = series("occupancy.registers", {"live values", "per work-item"}, {"throughput", "Gstep/s"});
    regs.meta["kernels"] = nlohmann::json::array();
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
      measure_rate(regs, k, r, wg_ * sizeof(uint32_t), static_cast<double>(r));
    }
    out.push_back(regs);

    // Waves per unit, with few registers.
    Kernel& small = build(8, nullptr);
    Series waves = series("occupancy.waves", {"work-items per compute unit", ""}, {"step time", "ns"});
    waves.meta["regs"] = 8;
    try {
      waves.meta["wave_width_assumed"] = dev_.kernel_resources(small).preferred_work_group_multiple;
    } catch (const Unsupported&) {
      // Without a confident wave width from divergence there is then no count of waves.
    }
    measure_waves(waves, small, quick);
    out.push_back(waves);

    // Local memory per work-group.
    std::vector<size_t> local_list =
        quick ? std::vector<size_t>{256, 4096, 16384}
              : std::vector<size_t>{256, 4096, 8192, 12288, 16384, 24576, 32768, 49152};
    const size_t local_cap = std::min<size_t>(info_.local_mem_bytes, 64 * 1024);
    Series local = series("occupancy.local", {"local memory", "B"}, {"throughput", "Gstep/s"});
    local.meta["regs"] = 8;
    for (size_t bytes : local_list) {
      bytes = std::max(bytes, wg_ * sizeof(uint32_t));
      if (bytes > local_cap) break;
      if (budget.exhausted() && local.points.size() >= 3) {
        local.meta["budget_note"] = fmt::format("the budget ran out before {} B", bytes);
        break;
      }
      measure_rate(local, small, 8, bytes, static_cast<double>(bytes));
    }
    out.push_back(local);
    for (auto& s : out) s.meta["wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  Series series(const std::string& id, Axis x, Axis y) const {
    Series s;
    s.id = id;
    s.probe = "occupancy";
    s.x = std::move(x);
    s.y = std::move(y);
    s.meta = {{"kernel", "occupancy.cl:occupancy"},
              {"work_group_size", wg_},
              {"cycle_slots", next_host_.size()},
              {"pattern", "one random cycle chased by all lanes of a work-group together"}};
    return s;
  }

  void build_cycle(uint32_t n) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    SplitMix64 rng(0x0cc0ba11u ^ n);
    for (uint32_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    next_host_.assign(n, 0);
    for (uint32_t k = 0; k < n; ++k) next_host_[order[k]] = order[(k + 1) % n];
  }

  Kernel& build(int regs, nlohmann::json* facts) {
    std::vector<std::string> opts = {fmt::format("-DREGS={}", regs)};
    if (nv_verbose_) {
      opts.push_back("-cl-nv-verbose");
      // NVIDIA's driver caches what ptxas made across runs, keyed by the
      // PTX, and a build served from that cache logs no register count. A
      // number unique to this run, which occupancy.cl writes into the PTX
      // as a comment, makes every build a real one (tens of ms each). (An
      // unused macro alone did not: the PTX stayed the same.)
      opts.push_back(fmt::format("-DGPUSCOPE_RUN_NONCE={}", run_nonce_));
    }
    Kernel& k = dev_.kernel({"occupancy.cl", "occupancy", opts});
    if (facts) {
      (*facts)["regs"] = regs;
      try {
        const KernelResources res = dev_.kernel_resources(k);
        (*facts)["private_mem_bytes"] = res.private_mem_bytes;
        (*facts)["max_work_group_size"] = res.max_work_group_size;
      } catch (const Unsupported&) {
      }
      try {
        const std::string log = dev_.build_log(k);
        if (auto used = registers_from_log(log)) (*facts)["registers_used"] = *used;
        // What the compiler said, for a person checking the count (first build only).
        if (regs == 8) (*facts)["build_log_head"] = log.substr(0, 1500);
      } catch (const Unsupported&) {
      }
      try {
        const std::string decl = ptx_reg_declarations(dev_.program_binary(k));
        if (!decl.empty()) (*facts)["ptx_reg_declarations"] = decl;
      } catch (const Unsupported&) {
      }
    }
    return k;
  }

  // The host's walk of one work-group: every lane's output.
  std::vector<uint32_t> expected_group(uint64_t group, int regs, uint32_t steps) const {
    const auto n = static_cast<uint32_t>(next_host_.size());
    uint32_t p = static_cast<uint32_t>((group * kStartSpacing) % n);
    const uint32_t p0 = p;
    std::vector<uint32_t> sums(static_cast<size_t>(regs), 0);
    for (uint32_t s = 0; s < steps; ++s)
      for (int k = 0; k < regs; ++k) {
        p = next_host_[p];
        sums[static_cast<size_t>(k)] += p;
      }
    std::vector<uint32_t> out(wg_);
    for (uint32_t lid = 0; lid < wg_; ++lid) {
      uint32_t h = p ^ (lid ^ p0);
      for (int k = 0; k < regs; ++k) {
        const uint32_t r = lid * (2u * static_cast<uint32_t>(k) + 1u) + static_cast<uint32_t>(k) +
                           sums[static_cast<size_t>(k)];
        h = (h ^ r) * 0x9E3779B1u;
      }
      out[lid] = h;
    }
    return out;
  }

  // One launch of `groups` work-groups of `steps` x REGS chase steps each;
  // checks kCheckedGroups groups spread over the launch.
  double launch(Kernel& k, int regs, size_t groups, uint32_t steps, size_t local_bytes) {
    const KernelArg args[] = {next_.get(),
                              out_for(groups).get(),
                              LocalBytes{local_bytes},
                              kStartSpacing,
                              static_cast<uint32_t>(next_host_.size()),
                              steps};
    const double ns = dev_.launch(k, Range::d1(groups * wg_), Range::d1(wg_), args);
    for (size_t c = 0; c < std::min(groups, kCheckedGroups); ++c) {
      const size_t g = c * groups / std::min(groups, kCheckedGroups);
      const auto got = dev_.read_values<uint32_t>(*out_, wg_, g * wg_);
      if (got != expected_group(g, regs, steps))
        throw ValidationError(
            fmt::format("occupancy: work-group {} of {} (REGS={}, {} steps) computed other values "
                        "than the host's walk",
                        g, groups, regs, steps));
    }
    return ns;
  }

  std::unique_ptr<Buffer>& out_for(size_t groups) {
    if (!out_ || out_->size_bytes() < groups * wg_ * sizeof(uint32_t))
      out_ = dev_.create_buffer(groups * wg_ * sizeof(uint32_t));
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
        [&](uint64_t steps) { return launch(k, regs, groups, static_cast<uint32_t>(steps), local_bytes); },
        initial, 1u << 20, ctx_.options.harness);
    last_lane_steps_ = m.work_per_launch * static_cast<uint64_t>(regs);
    const double lane_steps = static_cast<double>(groups * wg_) * regs;
    Point p;
    p.x = x;
    for (double ns : m.ns_per_unit) p.samples.push_back(lane_steps / ns);
    p.y = median(p.samples);
    insert_point(s, p);
    ctx_.progress(fmt::format("{} {:>6g}  {:8.2f} Gstep/s  (spread {:.1f}%, {:.1f} ms launches)", s.id, x,
                              p.y, 100 * m.summary.rel_spread, m.launch_ms));
  }

  void add_wave_point(Series& s, Kernel& k, size_t groups_per_cu) {
    const size_t groups = groups_per_cu * std::max<uint32_t>(1, info_.compute_units);
    const Measurement m = measure(
        [&](uint64_t steps) {
          return launch(k, 8, groups, static_cast<uint32_t>(steps), wg_ * sizeof(uint32_t));
        },
        last_wave_steps_, 1u << 20, ctx_.options.harness);
    last_wave_steps_ = m.work_per_launch;
    Point p;
    p.x = static_cast<double>(groups_per_cu * wg_);
    p.samples = m.ns_per_unit;
    p.y = m.summary.median;
    insert_point(s, p);
    ctx_.progress(fmt::format("{} {:>6g}  {:8.1f} ns/step  (spread {:.1f}%)", s.id, p.x, p.y,
                              100 * m.summary.rel_spread));
  }

  // Doubling until the step time jumps, then bisection to adjacent counts.
  void measure_waves(Series& s, Kernel& k, bool quick) {
    const size_t limit = gpu_ ? 256 : 8;  // work-groups per unit; 256 x 64 = 16384 work-items
    // From 4 work-groups per unit on GPUs (256 work-items: no GPU keeps
    // fewer resident), from 1 on CPUs.
    const size_t first = gpu_ ? 4 : 1;
    size_t lo = first, hi = 0;
    add_wave_point(s, k, first);
    const double y0 = s.points.front().y;
    for (size_t n = 2 * first; n <= limit; n *= 2) {
      add_wave_point(s, k, n);
      if (s.points.back().y > 1.5 * y0) {
        hi = n;
        break;
      }
      lo = n;
    }
    // Capacities are usually a power of two: one more work-group than the
    // last count that fitted settles it at once; bisection otherwise.
    // Points are kept sorted by x, so a new point is found by its x, not
    // at the back.
    const auto y_at = [&](size_t groups) {
      const auto it = std::find_if(s.points.begin(), s.points.end(),
                                   [&](const Point& p) { return p.x == static_cast<double>(groups * wg_); });
      return it == s.points.end() ? 0.0 : it->y;
    };
    if (!quick && hi > lo + 1) {
      add_wave_point(s, k, lo + 1);
      if (y_at(lo + 1) > 1.5 * y0) hi = lo + 1;
    }
    while (!quick && hi > lo + 1) {
      const size_t mid = (lo + hi) / 2;
      add_wave_point(s, k, mid);
      (y_at(mid) > 1.5 * y0 ? hi : lo) = mid;
    }
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  bool gpu_ = true;
  bool nv_verbose_ = false;
  uint64_t run_nonce_ = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  size_t wg_ = 64;
  uint64_t last_lane_steps_ = 8, last_wave_steps_ = 4;  // previous points' work per launch
  std::vector<uint32_t> next_host_;
  std::unique_ptr<Buffer> next_, out_;
};

}  // namespace

std::vector<Series> run_occupancy_probe(ProbeContext& ctx) { return OccupancyProbe(ctx).run(); }

}  // namespace gpuscope
