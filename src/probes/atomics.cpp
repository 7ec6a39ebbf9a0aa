// Probe `atomics`: latency of an atomic hand-off between two work-items and
// the throughput of atomic adds (the Mali-G52 article's cross-thread CAS and
// atomic-add experiments), 32-bit and, with cl_khr_int64_base_atomics,
// 64-bit.
//
// Shape of the experiment, and why:
// - Ping-pong: two players advance one counter in turns with
//   compare-and-swap (atomics.cl). Each move has to observe the other's, so
//   the time per move is one atomic round trip between them: through the
//   shared cache level for two work-groups (global memory), through local
//   memory for two work-items of one group (in different warps/waves so the
//   hand-off is not a lane shuffle).
// - Forward progress: OpenCL does not promise that the other player runs at
//   all while one spins. Every spin is capped (spin_cap attempts in total,
//   scaled to the moves asked for, so the worst launch is a fraction of a
//   second); a capped launch is reported as "not measurable on this device"
//   in the series' meta, never waited out, never timed.
// - Add throughput: a full device's worth of work-items each add `iters`
//   times to its own word (uncontended) or all to one word (fully
//   contended); the host checks every total. Launches are sized by the
//   harness to ~10 ms.
#include "core/error.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gpuscope {
namespace {

struct CapHit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Spins allowed per player: 8 per move it is asked to make (a waiting
// player typically fails 1-3 times per move) plus a fixed 2^17.
uint32_t spin_cap(uint32_t rounds, const DeviceFeatures& f) {
  // Rounds and spins share one invocation's loop trips (loop_trips.hpp).
  return static_cast<uint32_t>(loop_trip_cap(f, 8 * uint64_t{rounds} + (1u << 17), uint64_t{rounds} + 8));
}

class AtomicsProbe {
 public:
  explicit AtomicsProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {}

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    std::vector<int> widths{32};
    if (info_.features.int64_atomics) widths.push_back(64);
    const Axis bits{"counter width", "bit"};
    Series global = make_series("atomics.ping_pong.global", "atomics", bits, {"hand-off latency", "ns"});
    Series local = make_series("atomics.ping_pong.local", "atomics", bits, {"hand-off latency", "ns"});
    Series uncontended = make_series("atomics.add.uncontended", "atomics", bits, {"throughput", "Gops"});
    Series contended = make_series("atomics.add.contended", "atomics", bits, {"throughput", "Gops"});
    for (auto* s : {&global, &local}) s->meta = {{"not_measurable", nlohmann::json::object()}};
    for (int w : widths) {
      ping_pong(global, w, false);
      ping_pong(local, w, true);
      add_throughput(uncontended, w, false);
      add_throughput(contended, w, true);
      if (budget.exhausted()) break;
    }
    std::vector<Series> out{global, local, uncontended, contended};
    for (auto& s : out) s.meta["wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  void ping_pong(Series& s, int width, bool in_group) {
    const std::string name = in_group ? "ping_pong_local" : "ping_pong_global";
    Kernel& k = dev_.kernel({"atomics", name, {{"use_64", width == 64}}});
    auto counter = dev_.create_buffer(8);
    auto result = dev_.create_buffer(4 * sizeof(uint32_t));
    // Players 0 and `partner` of one group of 128: different warps on
    // NVIDIA (32 lanes) and waves on AMD (64).
    const size_t group = std::min<size_t>(128, k.max_work_group_size());
    const uint32_t partner = static_cast<uint32_t>(group / 2);
    if (in_group && partner == 0) throw Unsupported("atomics: groups of 2+ work-items are needed");
    auto once = [&](uint64_t work) {
      const auto rounds = static_cast<uint32_t>(work);
      dev_.write_values<uint64_t>(*counter, std::vector<uint64_t>{0});
      double ns = 0;
      if (in_group) {
        const KernelArg args[] = {rounds, partner, spin_cap(rounds, info_.features), result.get()};
        ns = dev_.launch(k, {Range::d1(group), Range::d1(group), 8}, args);
      } else {
        const KernelArg args[] = {counter.get(), rounds, spin_cap(rounds, info_.features), result.get()};
        ns = dev_.launch(k, Range::d1(2), Range::d1(1), args);
      }
      const auto r = dev_.read_values<uint32_t>(*result, 4);
      if (r[2] >= spin_cap(rounds, info_.features) || r[3] >= spin_cap(rounds, info_.features))
        throw CapHit(fmt::format("a player gave up after {} failed attempts (moves made: {} and {} of {})",
                                 std::max(r[2], r[3]), r[0], r[1], rounds));
      // A device that ends loops early (DeviceFeatures::max_loop_trips) may
      // stop a spinning player before its own cap counts out.
      if ((r[0] != rounds || r[1] != rounds) && info_.features.max_loop_trips != 0)
        throw CapHit(fmt::format("the device ended the players' loops after {} and {} moves of {} ({} and {} failed "
                                 "attempts; its loops end after {} iterations in all)",
                                 r[0], r[1], rounds, r[2], r[3], info_.features.max_loop_trips));
      if (r[0] != rounds || r[1] != rounds)
        throw ValidationError(
            fmt::format("atomics: ping-pong made {} and {} moves of {}", r[0], r[1], rounds));
      if (!in_group) {
        const uint64_t c = dev_.read_values<uint64_t>(*counter, 1)[0];
        const uint64_t want = 2ull * rounds;
        if ((width == 64 ? c : (c & 0xffffffffu)) != want)
          throw ValidationError(fmt::format("atomics: counter ended at {}, not {}", c, want));
      }
      return ns;  // the harness wants the launch's time; work = rounds
    };
    try {
      // Where loop trips are capped, a quarter of them for rounds, the rest for spins.
      const uint64_t max_rounds = loop_trip_cap(info_.features, 1u << 22, 3 * uint64_t{info_.features.max_loop_trips} / 4);
      const Measurement m = measure(once, std::min<uint64_t>(256, max_rounds), max_rounds, ctx_.options.harness);
      std::vector<double> per_move;
      for (double v : m.ns_per_unit) per_move.push_back(v / 2);  // two moves per round
      add_point(s, width, per_move);
      ctx_.progress(fmt::format("atomics: {} ping-pong ({}-bit) {:.1f} ns per hand-off",
                                in_group ? "local" : "global", width, s.points.back().y));
    } catch (const CapHit& e) {
      s.meta["not_measurable"][std::to_string(width)] = fmt::format(
          "no forward progress between the players: {} (neither OpenCL nor Vulkan promises that "
          "{} run concurrently)",
          e.what(), in_group ? "work-items of a group" : "work-groups");
      ctx_.progress(fmt::format("atomics: {} ping-pong ({}-bit) not measurable: {}",
                                in_group ? "local" : "global", width, e.what()));
    }
    s.meta["kernel"] = "atomics/" + name;
    s.meta["group"] = in_group ? group : 1;
  }

  void add_throughput(Series& s, int width, bool contended) {
    Kernel& k =
        dev_.kernel({"atomics", "add_throughput", {{"use_64", width == 64}}});
    const size_t group = std::min<size_t>(256, k.max_work_group_size());
    // A full GPU: 2048 work-items per compute unit; a CPU: a few groups per core.
    const size_t per_cu = info_.type == "gpu" ? 2048 : 2 * group;
    const size_t items = std::max<size_t>(1, info_.compute_units) * per_cu / group * group;
    const size_t word_bytes = width / 8;
    auto words = dev_.create_buffer(items * word_bytes);
    const std::vector<std::byte> zeros(items * word_bytes);
    // 32-bit totals must not wrap: the contended word gets items * iters.
    const uint64_t max_iters =
        contended && width == 32 ? std::numeric_limits<uint32_t>::max() / items : 1u << 20;
    auto once = [&](uint64_t iters) {
      dev_.write(*words, 0, zeros);
      const KernelArg args[] = {words.get(), static_cast<uint32_t>(iters), uint32_t{contended}};
      const double ns = dev_.launch(k, Range::d1(items), Range::d1(group), args);
      check_totals(*words, items, width, iters, contended);
      return ns;  // the harness wants the launch's time; work = iters
    };
    const uint64_t max_trips = loop_trip_cap(info_.features, std::max<uint64_t>(1, max_iters), 8);
    const Measurement m = measure(once, std::min<uint64_t>(4, max_trips), max_trips, ctx_.options.harness);
    std::vector<double> gops;
    // ns_per_unit is per iteration of all `items` work-items: items adds.
    for (double ns_per_iter : m.ns_per_unit) gops.push_back(static_cast<double>(items) / ns_per_iter);
    add_point(s, width, gops);
    s.meta = {{"kernel", "atomics/add_throughput"},
              {"work_items", items},
              {"group", group},
              {"words", contended ? "one word for all" : "one word per work-item"}};
    ctx_.progress(fmt::format("atomics: add {} ({}-bit) {:.2f} Gops", contended ? "contended" : "uncontended",
                              width, s.points.back().y));
  }

  void check_totals(const Buffer& words, size_t items, int width, uint64_t iters, bool contended) {
    const size_t n = contended ? 1 : items;
    std::vector<uint64_t> got(n);
    if (width == 64) {
      got = dev_.read_values<uint64_t>(words, n);
    } else {
      const auto w = dev_.read_values<uint32_t>(words, n);
      std::copy(w.begin(), w.end(), got.begin());
    }
    const uint64_t want = contended ? iters * items : iters;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != want)
        throw ValidationError(
            fmt::format("atomics: word {} holds {} after the adds, not {}", i, got[i], want));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
};

}  // namespace

std::vector<Series> run_atomics_probe(ProbeContext& ctx) { return AtomicsProbe(ctx).run(); }

}  // namespace gpuscope
