// Probe `latency`: a single work-item chases pointers around a random cycle
// of cache-line-spaced slots, for footprints from 1 KiB to well past the last
// cache level. Time per hop against footprint is the staircase the cache
// hierarchy inference reads (analysis/cache_hierarchy).
//
// Shape of the experiment, and why:
// - One work-item, one chain: each load's address is the previous load's
//   value, so nothing overlaps and the time per hop is the load-to-use
//   latency of whichever level holds the footprint.
// - Slots are one cache line apart (the line size the driver reports), so a
//   footprint of F bytes occupies F bytes of cache lines.
// - The cycle is uniformly random, so hardware prefetchers cannot follow it
//   and an LRU cache smaller than the footprint misses on every hop.
// - Before timing, the cycle is walked whole once (when that fits the time
//   budget) so that every level that can hold the footprint does; long
//   cycles are walked as many chains at once, each over its own stretch.
// - Coarse geometric sweep first, then refinement where the curve changes,
//   so capacities are bracketed tightly without a dense sweep everywhere.
#include "analysis/cache_hierarchy.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/random_cycle.hpp"
#include "probes/chase_rig.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace gpuscope {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // the chase kernel's unrolling
constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;
constexpr size_t kLinkGroup = 64;
// The warm-up's chains (see measure_point and warm_in_chains): a cycle's
// rest longer than kSerialWarmLaunches target launches of the timing chain
// is walked by up to kWarmChains chains at once, in about kWarmLaunches
// launches at most.
constexpr uint32_t kWarmChains = 256;
constexpr uint64_t kWarmLaunches = 256;
constexpr double kSerialWarmLaunches = 2;

// A point's latency is the 10th percentile of its samples, not their median.
// Interference (a co-tenant sharing the core's caches, an interrupt) only
// ever adds time to a chase, and a launch cannot finish faster than its
// loads, so the fast tail is the device's own latency and the slow tail is
// noise; the 10th rather than the minimum keeps one mistimed sample from
// deciding. On the H100 the two differ by 0.4% on average, most on the rises
// where a revisit's fresh cycle lands differently. All samples stay in the
// series.
constexpr double kLatencyQuantile = 0.1;

// Slot spacing: the cache line the driver reports, else 64 B (the smallest
// line of current GPUs and CPUs); never less than a pointer.
size_t slot_stride_bytes(const DeviceInfo& info) {
  size_t stride = info.global_cache_line_bytes ? info.global_cache_line_bytes : 64;
  stride = std::max<size_t>(stride, info.address_bits / 8);
  return std::bit_ceil(stride);
}

// Largest footprint worth sweeping: on a GPU 8x the cache the driver claims
// and at least 1 GiB, four times the largest last level we know of (MI300X's
// 256 MiB Infinity Cache); past it a chase shows only DRAM and page walks,
// which the tlb probe sweeps. (2 GiB cost an H200 2.4 s of cycle building
// for two points that read as 1 GiB's DRAM latency, 351 ns against 350.)
// On a CPU 4x the claimed last-level cache within 64..512 MiB (a larger
// sweep costs set-up time on a 2-core machine and shows only page-walk
// effects). Always within the device's max allocation and a quarter of its
// memory.
size_t planned_max_footprint(const DeviceInfo& info) {
  size_t want = 0;
  if (info.type == "cpu") {
    want = std::clamp<size_t>(4 * info.global_cache_bytes, 64 * kMiB, 512 * kMiB);
  } else {
    want = std::max<size_t>(8 * info.global_cache_bytes, kGiB);
  }
  want = std::min<size_t>(want, info.max_alloc_bytes);
  if (info.global_mem_bytes) want = std::min<size_t>(want, info.global_mem_bytes / 4);
  return std::bit_floor(std::max<size_t>(want, 64 * kKiB));
}

// PoCL's multi-threaded CPU drivers ("pthread", "cpu") run the kernel on a
// worker while runtime threads stay busy beside it; on a VM whose vCPUs are
// unannounced hyperthreads of one core they share the chase's L1 and L2 (on
// the CI VM the L1 reads 8 KiB of 32). Its single-threaded driver ("basic",
// named "cpu-minimal" since PoCL 4) runs the kernel on the calling thread. Said in the results rather than
// worked around: the driver is the user's choice, and throughput probes want the threads.
std::string shared_core_caveat(const DeviceInfo& info) {
  const bool pocl = info.platform.find("Portable Computing Language") != std::string::npos;
  const bool single_threaded = info.name.rfind("basic", 0) == 0 || info.name.rfind("cpu-minimal", 0) == 0;
  if (!pocl || info.type != "cpu" || single_threaded) return "";
  return "PoCL's threaded CPU driver keeps runtime threads beside the chase; where they share a core "
         "(SMT siblings) private caches read small. For cache sizes run with POCL_DEVICES=basic.";
}

class LatencyProbe {
 public:
  explicit LatencyProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    stride_ = slot_stride_bytes(info_);
    index_chase_ = uses_index_chase(info_, ctx.options.chase);
    const auto addr = chase_params(info_, index_chase_);
    // The index chase's arithmetic kernel first: a backend without it
    // (the sim) has no index chase, and says so before anything runs.
    if (index_chase_) arith_ = &dev_.kernel({"latency", "chase_arith", addr});
    link_ = &dev_.kernel({"latency", "link", addr});
    chase_ = &dev_.kernel({"latency", "chase", addr});
    allocate(planned_max_footprint(info_));
    // The warm-up's chains, one work-group of them, on GPUs: a CPU device
    // runs a work-group's work-items one after another, so chains would
    // gain it nothing. The sim, a modelled GPU, keeps the single chain for
    // now: its budget clock counts modelled time (the walk costs it host
    // time only), and with chains its seeded noise reaches the later points
    // at other draws, where one drawn GPU's L2 then read 19% large (32 KiB
    // as 39 KiB: a point 6% up the rise taken into the plateau at 2.7%
    // noise): the inference's sensitivity at an edge that
    // docs/recovery-benchmark.md lists under what is left.
    if (info_.type == "gpu") {
      try {
        walk_ = &dev_.kernel({"latency", "walk", addr});
        chain_starts_ = dev_.create_buffer(kWarmChains * sizeof(uint32_t));
        chain_ends_ = dev_.create_buffer(kWarmChains * sizeof(uint32_t));
      } catch (const Unsupported& e) {
        walk_ = nullptr;
        ctx_.progress(std::string("latency: cycles are warmed by one chain: ") + e.what());
      }
    }
  }

  std::vector<Series> run() {
    const bool quick = ctx_.options.quick;
    const bool cpu = info_.type == "cpu";
    TimeBudget budget = ctx_.budget();

    Series s = make_series("latency.global", "latency", {"footprint", "B"}, {"latency", "ns"},
                           {{"kernel", "latency/chase"},
                            {"stride_bytes", stride_},
                            {"max_footprint_bytes", max_footprint_},
                            {"hops_per_round", kHopsPerRound},
                            {"pattern", "random single cycle, one work-item"},
                            {"detail", nlohmann::json::array()}});

    if (index_chase_) {
      const double arith = measure_arith();
      // A CPU's loads scale and add an index in their addressing mode, at
      // no cost on the chain (on PoCL the chain alone took 2.1 ns a hop,
      // more than a whole L1 hit by index): nothing to subtract there. A
      // GPU computes the address (a wide multiply-add) before the load.
      const bool cpu = info_.type == "cpu";
      arith_ns_ = cpu ? 0 : arith;
      s.meta["chase"] = "index";
      s.meta["index_arith_ns_per_hop"] = arith;
      s.meta["index_arith_subtracted"] = !cpu;
      s.meta["chase_method"] = fmt::format(
          "Chased by index (p = slots[p]{}); the index's address arithmetic, timed alone as a dependent chain "
          "of 64-bit multiply-adds ({:.2f} ns per hop), {}.",
          ctx_.options.chase == ChaseMethod::index ? ", as --chase index asked" : ": the device has no device addresses",
          arith, cpu ? "is not subtracted: a CPU's load folds the index into its addressing mode"
                     : "is subtracted from every sample");
    } else {
      s.meta["chase"] = "address";
      s.meta["chase_method"] = "Chased by device address (p = *p): nothing but the load on the critical path.";
    }
    ctx_.progress("latency: " + s.meta["chase_method"].get<std::string>());

    if (const std::string caveat = shared_core_caveat(info_); !caveat.empty()) {
      s.meta["caveat"] = caveat;
      ctx_.progress("latency: " + caveat);
    }

    // A replay measures the recorded points and nothing else.
    if (const auto* xs = ctx_.options.replay_of(s.id)) {
      for (double x : *xs)
        if (x <= static_cast<double>(max_footprint_) && x >= static_cast<double>(2 * stride_))
          measure_point(s, round_to_stride(x));
      s.meta["wall_s"] = budget.elapsed_s();
      s.meta["budget_s"] = budget.total_s();
      return {s};
    }

    // Coarse sweep: two points per octave (one in quick mode).
    const double step = quick ? 2.0 : std::sqrt(2.0);
    for (double f = kKiB; f <= static_cast<double>(max_footprint_) * 1.0001; f *= step) {
      measure_point(s, round_to_stride(f));
    }

    // Refinement: bisect where the curve changes, while the budget lasts.
    const int rounds = quick ? 2 : 4;
    const double min_ratio = std::pow(2.0, quick ? 1.0 / 8 : 1.0 / 16);
    for (int r = 0; r < rounds && budget.remaining_s() > 0; ++r) {
      const auto xs =
          analysis::refinement_footprints(s, quick ? 4 : 8, min_ratio, static_cast<double>(stride_));
      if (xs.empty()) break;
      for (double x : xs) {
        if (budget.exhausted()) break;
        measure_point(s, round_to_stride(x));
      }
    }

    // Visit points again, each time on a fresh cycle and later in time. On a
    // CPU the cores are shared: a co-tenant on an SMT sibling takes part of
    // the L1 and L2 for a fraction of a second at a time (measured on the CI
    // VM: a 24 KiB chase read 1.1 ns in a third of 0.4 s windows and up to
    // 4 ns in the rest), so every point gets two more visits there. Anywhere,
    // points that disagree with their neighbours get more. Smooth GPU curves
    // spend little here.
    for (int visit = 1; visit <= 3 && budget.remaining_s() > 0; ++visit) {
      std::vector<double> xs = visit <= 2 && cpu ? all_x(s) : rough_points(s);
      // Alternate the direction so that no footprint's visits all fall at
      // the same offsets in time from the others'.
      if (visit % 2 == 1) std::reverse(xs.begin(), xs.end());
      for (double x : xs) {
        if (budget.exhausted()) break;
        measure_point(s, static_cast<size_t>(x), visit);
      }
    }
    s.meta["wall_s"] = budget.elapsed_s();
    s.meta["budget_s"] = budget.total_s();
    return {s};
  }

 private:
  size_t round_to_stride(double f) const {
    const auto slots =
        std::max<size_t>(2, static_cast<size_t>(std::llround(f / static_cast<double>(stride_))));
    return std::min(slots * stride_, max_footprint_);
  }

  // Allocates the slot buffer for the largest footprint, halving on refusal:
  // a device with less memory than planned still gets the sweep it can hold.
  void allocate(size_t want) {
    for (size_t bytes = want; bytes >= 64 * kKiB; bytes /= 2) {
      try {
        slots_ = dev_.create_buffer(bytes);
        next_ = dev_.create_buffer(bytes / stride_ * sizeof(uint32_t));
        end_ = dev_.create_buffer(sizeof(uint32_t));
        max_footprint_ = bytes;
        if (bytes < want)
          ctx_.progress(fmt::format("latency: allocation of {} MiB refused, sweeping to {} MiB", want / kMiB,
                                    bytes / kMiB));
        return;
      } catch (const OutOfResources&) {
        slots_.reset();
        next_.reset();
      }
    }
    throw OutOfResources("latency: could not allocate even 64 KiB for the chase");
  }

  // One chase launch of `rounds` x 16 hops continuing from `cursor_`; checks
  // the slot it ended on against the host's walk of the same cycle.
  double chase(const Cycle& cycle, uint64_t rounds) {
    const auto r32 = static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX));
    const KernelArg args[] = {slots_.get(), cursor_, static_cast<uint32_t>(stride_ / word_bytes()), r32,
                              end_.get()};
    const double ns = dev_.launch(*chase_, Range::d1(1), Range::d1(1), args);
    const uint32_t got = dev_.read_values<uint32_t>(*end_, 1)[0];
    const uint32_t want = cycle.walk(cursor_, static_cast<uint64_t>(r32) * kHopsPerRound);
    if (got != want)
      throw ValidationError(
          fmt::format("latency: chase ended on slot {} but the host's walk ends on {} (footprint {} B)", got,
                      want, cycle.order.size() * stride_));
    cursor_ = got;
    return ns;
  }

  size_t word_bytes() const { return info_.address_bits == 32 ? 4 : 8; }

  // Walks `rounds` rounds of the cycle from cursor_ on, region after region
  // in cycle order, each region walked by up to kWarmChains chains in one
  // work-group (one compute unit, as the timed chase) over consecutive
  // stretches: at most about kWarmLaunches launches of a chain's few rounds
  // each. Stops once warm_ns (the warm-up's device time so far, added to)
  // reaches cap_ns. Adds the rounds walked to `warmed`; checks every chain's
  // end against the host's walk; leaves cursor_ where it was, so the timed
  // launches start where the walk began. Returns the chain count.
  //
  // Why regions: the timed chase must find the caches as a walk in cycle
  // order leaves them, its next slots the longest untouched. One launch of
  // chains over the whole cycle leaves every stretch's end fresh instead;
  // on an H200 the chase then hit the L2's near half past its capacity
  // (45 MiB read 206 ns where a walk in order reads the far half's 258, and
  // DRAM was reached at 1 GiB instead of 70 MiB). Region by region, the age
  // of what the timed chase meets rises in cycle order as after one walk.
  uint32_t warm_in_chains(const Cycle& cycle, uint64_t rounds, double cap_ns, uint64_t& warmed, double& warm_ns) {
    const uint64_t most = std::max<uint64_t>(1, std::min<uint64_t>(kWarmChains, walk_->max_work_group_size()));
    const uint64_t chain_rounds = std::max<uint64_t>(1, (rounds + most * kWarmLaunches - 1) / (most * kWarmLaunches));
    const auto chains = static_cast<uint32_t>(std::min(most, (rounds + chain_rounds - 1) / chain_rounds));
    const uint64_t region = chains * chain_rounds;  // rounds walked per launch
    std::vector<uint32_t> starts(chains);
    uint64_t done = 0;
    while (done < rounds && warm_ns < cap_ns) {
      for (uint32_t c = 0; c < chains; ++c)
        starts[c] = cycle.walk(cursor_, (done + c * chain_rounds) * kHopsPerRound);
      dev_.write_values<uint32_t>(*chain_starts_, starts);
      const KernelArg args[] = {slots_.get(), chain_starts_.get(), static_cast<uint32_t>(stride_ / word_bytes()),
                                static_cast<uint32_t>(chain_rounds), chain_ends_.get()};
      warm_ns += dev_.launch(*walk_, Range::d1(chains), Range::d1(chains), args);
      const auto ends = dev_.read_values<uint32_t>(*chain_ends_, chains);
      for (uint32_t c = 0; c < chains; ++c) {
        const uint32_t want = cycle.walk(starts[c], chain_rounds * kHopsPerRound);
        if (ends[c] != want)
          throw ValidationError(fmt::format("latency: warm-up chain {} ended on slot {} but the host's walk ends on {} "
                                            "(footprint {} B)",
                                            c, ends[c], want, cycle.order.size() * stride_));
      }
      done += region;
    }
    warmed += std::min(rounds, done);
    return chains;
  }

  // ns per hop of chase_arith: the index chase's address arithmetic alone
  // (the fast tail, as for a chase point). Checks where every chain ended.
  double measure_arith() {
    constexpr uint32_t kStart = 12345, kScale = 8;  // scale: a slot's word bytes
    auto launch = [&](uint64_t rounds) {
      const auto r32 = static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX));
      const KernelArg args[] = {kStart, kScale, r32, end_.get()};
      const double ns = dev_.launch(*arith_, Range::d1(1), Range::d1(1), args);
      const uint32_t got = dev_.read_values<uint32_t>(*end_, 1)[0];
      uint32_t want = kStart;
      for (uint64_t i = 0; i < uint64_t{r32} * kHopsPerRound; ++i) want = want * kScale + 1;
      if (got != want)
        throw ValidationError(fmt::format("latency: the arithmetic chain ended on {} but the host's on {}", got, want));
      return ns;
    };
    const Measurement m = measure(launch, 64, UINT32_MAX, ctx_.options.harness);
    std::vector<double> per_hop;
    for (double v : m.ns_per_unit) per_hop.push_back(v / kHopsPerRound);
    return quantile(per_hop, kLatencyQuantile);
  }

  static std::vector<double> all_x(const Series& s) {
    std::vector<double> out;
    for (const auto& p : s.points) out.push_back(p.x);
    return out;
  }

  // Points whose latency departs from the line through their neighbours (in
  // log latency against log footprint) by more than their own samples'
  // spread can explain: either a disturbed visit or a step between them;
  // another visit tells which.
  static std::vector<double> rough_points(const Series& s) {
    std::vector<double> out;
    for (size_t i = 1; i + 1 < s.points.size(); ++i) {
      const Point& a = s.points[i - 1];
      const Point& b = s.points[i];
      const Point& c = s.points[i + 1];
      const double t = std::log(b.x / a.x) / std::log(c.x / a.x);
      const double expected = std::log(a.y) + t * (std::log(c.y) - std::log(a.y));
      const double sigma = std::max(0.015, summarize(b.samples).rel_spread);
      if (std::abs(std::log(b.y) - expected) > 3 * sigma) out.push_back(b.x);
    }
    return out;
  }

  // Measures `footprint` on a fresh random cycle. Visit 0 creates the point;
  // later visits (another cycle, another time) add their samples to it.
  void measure_point(Series& s, size_t footprint, int visit = 0) {
    Point* existing = nullptr;
    for (auto& p : s.points)
      if (p.x == static_cast<double>(footprint)) existing = &p;
    if (visit == 0 && existing) return;
    const auto n = static_cast<uint32_t>(footprint / stride_);
    const double t_setup = dev_.budget_clock_s();
    random_cycle_into(cycle_, n, (0x9e3779b97f4a7c15ULL * (visit + 1)) ^ n, cycle_threads(info_));
    const Cycle& cycle = cycle_;

    // Lay the cycle out on the device as absolute addresses.
    dev_.write_values<uint32_t>(*next_, cycle.next);
    const size_t global = (n + kLinkGroup - 1) / kLinkGroup * kLinkGroup;
    const KernelArg link_args[] = {slots_.get(), next_.get(), static_cast<uint32_t>(stride_ / word_bytes()),
                                   n};
    dev_.launch(*link_, Range::d1(global), Range::d1(std::min(kLinkGroup, link_->max_work_group_size())),
                link_args);
    cursor_ = 0;
    const double t_warm = dev_.budget_clock_s();

    // Warm: walk the whole cycle once, so that every level able to hold it
    // does, and what laying the cycle out left in the caches (the link
    // kernel's last writes, in address order) gives way to what the chase
    // leaves. Timed without it, points past the last level read fast by the
    // share of the cycle still cached (an H200 read 312 ns at 108 MiB and
    // 316 at 128 MiB unwarmed against 337, as DRAM: tests/data/h200/
    // latency_part_warm_skipped.json). A first stretch by the timing chain
    // measures its rate; a rest longer than a few target launches is walked
    // by many chains at once (warm_in_chains), which on a GPU takes a few
    // hundred chain stretches' time instead of the cycle's (an H200's
    // latency probe: 7.7 s of warm walks before, 1.3 s after). The walk
    // stops at warm_cap_ns where even that is too long (a single chain on a
    // CPU or the sim); the timed launches then go on to slots it never read,
    // and the part walked has still evicted the layout's leftovers.
    const HarnessConfig& hc = ctx_.options.harness;
    const double target_ns = hc.target_launch_ms * 1e6;
    const double warm_cap_ns = 30 * target_ns;
    const uint64_t cycle_rounds = (n + kHopsPerRound - 1) / kHopsPerRound;
    const uint64_t first = std::min<uint64_t>(cycle_rounds, 256);
    double warm_ns = chase(cycle, first);
    uint64_t warmed = first;
    const double ns_per_round = warm_ns / static_cast<double>(first);
    uint32_t chains = 0;
    const double serial_rest_ns = ns_per_round * static_cast<double>(cycle_rounds - warmed);
    if (walk_ && serial_rest_ns > kSerialWarmLaunches * target_ns) {
      chains = warm_in_chains(cycle, cycle_rounds - warmed, warm_cap_ns, warmed, warm_ns);
    } else {
      const auto chunk = std::max<uint64_t>(1, static_cast<uint64_t>(target_ns / ns_per_round));
      while (warmed < cycle_rounds && warm_ns < warm_cap_ns) {
        const uint64_t r = std::min(chunk, cycle_rounds - warmed);
        warm_ns += chase(cycle, r);
        warmed += r;
      }
    }

    // Time: the harness sizes launches from the warm-up's rate.
    const double t_timed = dev_.budget_clock_s();
    const auto initial =
        std::max<uint64_t>(1, static_cast<uint64_t>(hc.target_launch_ms * 1e6 / 8 / ns_per_round));
    const Measurement m = measure([&](uint64_t rounds) { return chase(cycle, rounds); }, initial, UINT32_MAX,
                                  after_warm_walk(hc, info_));
    Point p;
    p.x = static_cast<double>(footprint);
    if (existing) p.samples = existing->samples;
    for (double v : m.ns_per_unit) p.samples.push_back(v / kHopsPerRound - arith_ns_);
    p.y = quantile(p.samples, kLatencyQuantile);
    insert_point(s, p);
    s.meta["detail"].push_back(
        {{"x", footprint},
         {"visit", visit},
         {"median_ns", m.summary.median / kHopsPerRound},
         {"hops_per_launch", m.work_per_launch * kHopsPerRound},
         {"launch_ms", m.launch_ms},
         {"warm_fraction", std::min(1.0, static_cast<double>(warmed) / static_cast<double>(cycle_rounds))},
         {"warm_chains", chains},
         {"outliers", m.summary.outliers},
         // Where the point's time went, on the budget's clock (wall time;
         // modelled time on the sim): laying the cycle out (host and
         // device), walking it warm, and the harness's timed launches.
         {"wall_ms",
          {{"setup", 1e3 * (t_warm - t_setup)},
           {"warm", 1e3 * (t_timed - t_warm)},
           {"timed", 1e3 * (dev_.budget_clock_s() - t_timed)}}}});
    ctx_.progress(fmt::format("latency {:>12.1f} KiB  {:9.2f} ns  ({} samples, spread {:.1f}%){}",
                              static_cast<double>(footprint) / kKiB, p.y, p.samples.size(),
                              100 * m.summary.rel_spread, visit ? " again" : ""));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  size_t stride_ = 64;
  size_t max_footprint_ = 0;
  Kernel* link_ = nullptr;
  Kernel* chase_ = nullptr;
  Kernel* arith_ = nullptr;    // the index chase's arithmetic alone; null for the address chase
  Kernel* walk_ = nullptr;     // the warm-up's chains (warm_in_chains); null where not used
  std::unique_ptr<Buffer> chain_starts_, chain_ends_;  // one slot index per chain
  bool index_chase_ = false;
  double arith_ns_ = 0;        // subtracted from every index-chase sample (0 on a CPU)
  std::unique_ptr<Buffer> slots_, next_, end_;
  uint32_t cursor_ = 0;
  Cycle cycle_;  // the point's cycle, rebuilt in place point after point (its memory reused)
};

}  // namespace

std::vector<Series> run_latency_probe(ProbeContext& ctx) { return LatencyProbe(ctx).run(); }

}  // namespace gpuscope
