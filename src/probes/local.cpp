// Probe `local`: local (shared) memory latency, bandwidth and largest
// allocation, each beside the same experiment on global memory at a
// footprint the first cache holds, so that the analysis can say whether
// local memory is on-chip storage or ordinary memory behind the load/store
// cache (analysis/local_memory). Kernels and their shapes: src/kernels/opencl/local.cl.
//
// Shape of the experiment, and why:
// - Latency: one work-item chases a random single cycle of 4-byte slots
//   (4 KiB: every GPU's local memory and first cache hold it) by byte
//   offsets, in local memory and in global memory. The local copy is filled
//   by independent loads (microseconds of a ~10 ms launch).
// - Bandwidth: 8 work-groups per compute unit (a GPU needs many warps in
//   flight to saturate its local-memory port), conflict-free reads of 4, 8
//   and 16 bytes per work-item; the same reads from a global buffer of the
//   same size are the cached-global reference.
// - Capacity: the largest local allocation that launches and holds its
//   contents, up to the driver's figure (to 1 KiB resolution; NVIDIA keeps
//   1 KiB of it per group for itself). Never beyond it: PoCL's threaded
//   driver aborts the process on a larger request instead of refusing it.
//   Last in the probe, because a refused launch is an error path.
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/stats.hpp"
#include "kernels/local_twin.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>

namespace gpuscope {
namespace {

constexpr size_t kKiB = 1024;
constexpr uint32_t kHopsPerRound = 16;     // X16 in local.cl
constexpr uint32_t kChaseSlots = 1024;     // 4 KiB of 4-byte slots
constexpr size_t kWindowBytes = 8 * kKiB;  // N vectors of one read window (the group allocates 2N)

// Bytes one launch of local_read / global_read moves: every group reads its
// whole N-vector window once per round.
double read_bytes_moved(size_t groups, uint32_t rounds, size_t window_bytes) {
  return static_cast<double>(groups) * rounds * static_cast<double>(window_bytes);
}

class LocalProbe {
 public:
  explicit LocalProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    if (info_.local_mem_bytes == 0) throw Unsupported("local: the device reports no local memory");
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    std::vector<Series> out;
    Series lat = local_series("local.latency", {"footprint", "B"}, {"latency", "ns"});
    Series glat = local_series("local.global_latency", {"footprint", "B"}, {"latency", "ns"});
    chase(lat, glat);
    out.push_back(lat);
    out.push_back(glat);

    Series bw = local_series("local.bandwidth", {"access", "B"}, {"bandwidth", "GB/s"});
    Series gbw = local_series("local.global_bandwidth", {"access", "B"}, {"bandwidth", "GB/s"});
    for (int vec : {1, 2, 4}) reads(vec, bw, gbw);
    out.push_back(bw);
    out.push_back(gbw);

    out.push_back(capacity());
    for (auto& s : out) s.meta["probe_wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  static Series local_series(const std::string& id, Axis x, Axis y) {
    return make_series(id, "local", std::move(x), std::move(y), {{"kernel", "local"}});
  }

  size_t group_size(size_t want) const {
    return std::bit_floor(std::max<size_t>(1, std::min<size_t>(want, info_.max_work_group_size)));
  }

  // Latency: the same random cycle chased in local and in global memory.
  void chase(Series& lat, Series& glat) {
    std::vector<uint32_t> order(kChaseSlots);
    std::iota(order.begin(), order.end(), 0u);
    SplitMix64 rng(0x10ca1);
    for (uint32_t i = kChaseSlots - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    order.erase(std::find(order.begin(), order.end(), 0u));
    order.insert(order.begin(), 0u);  // the walk starts at slot 0
    std::vector<uint32_t> next(kChaseSlots), position(kChaseSlots);
    for (uint32_t k = 0; k < kChaseSlots; ++k) {
      next[order[k]] = order[(k + 1) % kChaseSlots] * 4;  // byte offsets
      position[order[k]] = k;
    }
    auto cycle = dev_.create_buffer(size_t{kChaseSlots} * 4);
    auto end = dev_.create_buffer(4);
    dev_.write_values<uint32_t>(*cycle, next);
    const size_t fp = size_t{kChaseSlots} * 4;

    Kernel& lk = dev_.kernel({"local", "local_chase", {}});
    Kernel& gk = dev_.kernel({"local", "global_chase", {}});
    auto run_chase = [&](bool local, uint64_t rounds64) {
      const auto rounds = static_cast<uint32_t>(std::min<uint64_t>(rounds64, UINT32_MAX));
      double ns = 0;
      if (local) {
        const KernelArg args[] = {cycle.get(), kChaseSlots, rounds, end.get()};
        ns = dev_.launch(lk, {Range::d1(1), Range::d1(1), fp}, args);
      } else {
        const KernelArg args[] = {cycle.get(), rounds, end.get()};
        ns = dev_.launch(gk, Range::d1(1), Range::d1(1), args);
      }
      const uint32_t got = dev_.read_values<uint32_t>(*end, 1)[0];
      const uint32_t want = order[(static_cast<uint64_t>(rounds) * kHopsPerRound) % kChaseSlots] * 4;
      if (got != want)
        throw ValidationError(fmt::format("local: {} chase ended at byte {}, the host's walk at {}",
                                          local ? "local" : "global", got, want));
      return ns;
    };
    for (bool local : {true, false}) {
      const Measurement m =
          measure([&](uint64_t r) { return run_chase(local, r); }, 64, UINT32_MAX, ctx_.options.harness);
      const double y = add_time_point(local ? lat : glat, static_cast<double>(fp), m.ns_per_unit, kHopsPerRound);
      (local ? lat : glat).meta["hops_per_launch"] = m.work_per_launch * kHopsPerRound;
      ctx_.progress(fmt::format("local: {} chase {:.2f} ns per hop", local ? "local" : "global", y));
    }
    lat.meta["pattern"] = glat.meta["pattern"] =
        "random single cycle of 4-byte slots, byte offsets, one work-item";
  }

  // Bandwidth of `vec`-word reads from local memory and from global memory.
  void reads(int vec, Series& bw, Series& gbw) {
    const size_t vb = static_cast<size_t>(vec) * 4;
    size_t wg = group_size(256);
    // The window: kWindowBytes, or what fits twice in the local memory.
    size_t window = std::min<size_t>(kWindowBytes, std::bit_floor<size_t>(info_.local_mem_bytes / 2));
    size_t n = window / vb;
    if (n < wg) wg = std::bit_floor(n);
    const size_t m = n / wg;
    const std::map<std::string, KernelParam> params = {{"vec", vec}, {"wg", wg}, {"m", m}};
    Kernel& lk = dev_.kernel({"local", "local_read", params});
    Kernel& gk = dev_.kernel({"local", "global_read", params});
    if (lk.max_work_group_size() < wg || gk.max_work_group_size() < wg)
      throw Unsupported(fmt::format("local: read kernels cannot run in groups of {}", wg));
    const size_t cus = std::max<uint32_t>(1, info_.compute_units);
    const size_t groups = cus * (info_.type == "cpu" ? 2 : 8);

    // The window's source words, random, and the global copy of it twice over.
    std::vector<uint32_t> words(window / 4);
    SplitMix64 rng(0xbad5eed + static_cast<uint64_t>(vec));
    for (auto& w : words) w = static_cast<uint32_t>(rng.next());
    const uint32_t window_sum = std::accumulate(words.begin(), words.end(), uint32_t{0});
    std::vector<uint32_t> twice(words);
    twice.insert(twice.end(), words.begin(), words.end());
    auto src = dev_.create_buffer(window);
    auto win = dev_.create_buffer(2 * window);
    auto sums = dev_.create_buffer(groups * wg * 4);
    dev_.write_values<uint32_t>(*src, words);
    dev_.write_values<uint32_t>(*win, twice);

    HarnessConfig hc = ctx_.options.harness;
    hc.target_launch_ms = std::min(hc.target_launch_ms, 5.0);
    for (bool local : {true, false}) {
      auto run = [&](uint64_t rounds64) {
        const auto rounds = static_cast<uint32_t>(std::min<uint64_t>(rounds64, UINT32_MAX));
        double ns = 0;
        if (local) {
          const KernelArg args[] = {src.get(), rounds, static_cast<uint32_t>(wg), sums.get()};
          ns = dev_.launch(lk, {Range::d1(groups * wg), Range::d1(wg), 2 * window}, args);
        } else {
          const KernelArg args[] = {win.get(), rounds, static_cast<uint32_t>(wg), sums.get()};
          ns = dev_.launch(gk, Range::d1(groups * wg), Range::d1(wg), args);
        }
        const auto got = dev_.read_values<uint32_t>(*sums, groups * wg);
        const uint32_t sum = std::accumulate(got.begin(), got.end(), uint32_t{0});
        const uint32_t want = static_cast<uint32_t>(groups) * rounds * window_sum;
        if (sum != want)
          throw ValidationError(
              fmt::format("local: {} read of uint{} summed to {:#x}, the host expects {:#x}",
                          local ? "local" : "global", vec, sum, want));
        return ns;
      };
      const Measurement m = measure(run, 16, UINT32_MAX, hc);
      Series& s = local ? bw : gbw;
      const double y =
          add_rate_point(s, static_cast<double>(vb), m.ns_per_unit, read_bytes_moved(groups, 1, window));
      s.meta["window_bytes"] = window;
      s.meta["groups"] = groups;
      s.meta["group_size"] = wg;
      ctx_.progress(fmt::format("local: {} reads of {} B: {:.1f} GB/s", local ? "local" : "global", vb, y));
    }
  }

  // One launch of local_touch with `bytes` of local memory: true when it
  // ran and its sums were right, false when the device refused it.
  bool touch(size_t bytes) {
    const auto words = static_cast<uint32_t>(bytes / 4);
    Kernel& k = dev_.kernel({"local", "local_touch", {}});
    const size_t items = group_size(std::min<size_t>(64, k.max_work_group_size()));
    if (!touch_sums_) touch_sums_ = dev_.create_buffer(size_t{64} * 4);
    try {
      const KernelArg args[] = {words, touch_sums_.get()};
      dev_.launch(k, {Range::d1(items), Range::d1(items), bytes}, args);
    } catch (const DeviceError&) {
      return false;
    }
    const auto got = dev_.read_values<uint32_t>(*touch_sums_, items);
    const uint32_t sum = std::accumulate(got.begin(), got.end(), uint32_t{0});
    return sum == local_twin::touch_total(words);
  }

  Series capacity() {
    Series s = local_series("local.capacity", {"allocation", "B"}, {"works", ""});
    s.meta["reported_bytes"] = info_.local_mem_bytes;
    auto record = [&](size_t bytes) {
      const bool ok = touch(bytes);
      insert_point(s, Point{static_cast<double>(bytes), ok ? 1.0 : 0.0, {ok ? 1.0 : 0.0}});
      return ok;
    };
    const size_t reported = info_.local_mem_bytes;
    size_t lo = 0, hi = 0;  // largest that worked, smallest that failed (0: none yet)
    if (record(reported)) {
      lo = reported;
    } else {
      hi = reported;
      if (record(kKiB)) lo = kKiB;
    }
    while (lo && hi && hi - lo > kKiB) {
      const size_t mid = (lo + hi) / 2 / kKiB * kKiB;
      if (mid <= lo || mid >= hi) break;
      (record(mid) ? lo : hi) = mid;
    }
    s.meta["largest_working_bytes"] = lo;
    if (hi) s.meta["smallest_failing_bytes"] = hi;
    ctx_.progress(fmt::format("local: largest allocation that works {} B (driver: {} B)", lo, reported));
    return s;
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  std::unique_ptr<Buffer> touch_sums_;
};

}  // namespace

std::vector<Series> run_local_probe(ProbeContext& ctx) { return LocalProbe(ctx).run(); }

}  // namespace gpuscope
