// Probe `tlb`: address-translation reach and miss penalty, measured directly.
//
// Series:
//   tlb.stride_<S>  x = footprint (bytes), y = ns per hop: a random cycle over
//                   n slots S bytes apart (S = 4 KiB, 64 KiB and 2 MiB on
//                   a GPU, 4 KiB and 2 MiB on a CPU), so every hop lands on
//                   another S-sized block of addresses and, for S >= the
//                   page size, on another page. GPUs map 4 KiB (Mali,
//                   Adreno: the CPU's page tables), 64 KiB or 2 MiB pages;
//                   a stride larger than the page puts the step at entries
//                   x stride, past the sweep on a phone's TLB (Mali-G52:
//                   8 MiB of 4 KiB pages, 128 MiB at a 64 KiB stride).
//   tlb.control     x = slots, y = ns per hop: the same number of slots one
//                   cache line apart (a few pages in all).
//
// Why this shape: the data a page-strided chase touches is only n cache
// lines, which fit the caches for every n swept (at most 128 Ki lines = 16
// MiB at 128 B), so what grows with the footprint is the number of pages,
// not the data. The control touches as many lines in very few pages, so it
// shows what the caches alone do with n lines (on a GPU the L1 overflows
// past ~2000 lines whatever the stride); analysis/tlb subtracts it and reads
// the remaining steps as translation levels running out of reach. Slots are
// not at the same offset in each block: slot i sits o(i) lines into its
// block, o(i) = the sum of i's digits in base m = S/line, mod m. Then any m^k
// consecutive slots fall on m^k distinct lines modulo m^k, so over any
// power-of-two count of sets a cache indexed by address bits sees the n
// lines spread as evenly as the control's consecutive lines. (A plain
// i * 37 mod m gave slot i's line the parity of i: half the sets of a cache
// with 2m sets, whose capacity then ran out at half the control's.)
//
// Comparing the strides tells the page size: for S <= page, the step falls at
// the same footprint (entries x page); for S > page, at entries x S. The
// reach reported is the smallest footprint at which a step appears.
#include "core/error.hpp"
#include "probes/chase_rig.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpuscope {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;

size_t line_bytes(const DeviceInfo& info) {
  return std::bit_ceil<size_t>(std::max<size_t>(
      info.global_cache_line_bytes ? info.global_cache_line_bytes : 64, info.address_bits / 8));
}

// The sum of n's digits in base m, mod m (m >= 1).
size_t digit_sum_mod(size_t n, size_t m) {
  if (m <= 1) return 0;
  size_t sum = 0;
  for (; n; n /= m) sum += n % m;
  return sum % m;
}

class TlbProbe {
 public:
  explicit TlbProbe(ProbeContext& ctx)
      : ctx_(ctx),
        info_(ctx.device.info()),
        quick_(ctx.options.quick),
        cpu_(info_.type == "cpu"),
        rig_(ctx, planned_bytes(), 64 * kMiB) {
    hc_ = ctx.options.harness;
    hc_.target_launch_ms = std::min(hc_.target_launch_ms, 1.5);
    hc_.min_samples = std::min(hc_.min_samples, 4);
    hc_.max_samples = std::min(hc_.max_samples, 7);
    line_ = line_bytes(info_);
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    const std::vector<size_t> strides =
        cpu_ ? std::vector<size_t>{4 * kKiB, 2 * kMiB} : std::vector<size_t>{4 * kKiB, 64 * kKiB, 2 * kMiB};
    // The slot counts every series shares: 2 per octave (1 quick) from 8 up
    // to what the largest footprint allows for the smallest stride.
    const size_t max_slots =
        std::min<size_t>(rig_.bytes() / strides.front(), quick_ ? (cpu_ ? 4096 : 16384) : 131072);
    std::vector<uint32_t> counts;
    const double step = quick_ ? 2.0 : std::sqrt(2.0);
    for (double n = quick_ ? 16 : 8; n <= static_cast<double>(max_slots) * 1.0001; n *= step)
      counts.push_back(static_cast<uint32_t>(std::llround(n)));

    std::vector<Series> out;
    Series control = chase_series("tlb.control", {"slots", ""}, line_);
    for (uint32_t n : counts) {
      if (budget.exhausted()) break;
      measure(control, n, line_, static_cast<double>(n));
    }
    out.push_back(std::move(control));
    for (size_t s : strides) {
      Series series = chase_series(fmt::format("tlb.stride_{}", s), {"footprint", "B"}, s);
      for (uint32_t n : counts) {
        if (static_cast<size_t>(n) * s > rig_.bytes()) break;
        if (budget.exhausted()) break;
        measure(series, n, s, static_cast<double>(n) * static_cast<double>(s));
      }
      out.push_back(std::move(series));
    }
    out.back().meta["wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  // 2 GiB on a GPU, 1 GiB on a CPU (256 MiB quick), within a quarter of the
  // device's memory and its largest allocation: enough for the first TLB
  // step of the GPUs measured so far (the H200's shows at 360-720 MiB), and
  // the largest chase that has run on a GPU.
  size_t planned_bytes() const {
    size_t want = cpu_ ? (quick_ ? 256 * kMiB : 1 * kGiB) : 2 * kGiB;
    if (info_.max_alloc_bytes) want = std::min<size_t>(want, info_.max_alloc_bytes);
    if (info_.global_mem_bytes) want = std::min<size_t>(want, info_.global_mem_bytes / 4);
    return std::bit_floor(std::max<size_t>(want, 64 * kMiB));
  }

  Series chase_series(const std::string& id, Axis x, size_t stride) const {
    return make_series(id, "tlb", std::move(x), {"latency", "ns"},
                       {{"kernel", "chase_layout/chase_groups"},
                        {"stride_bytes", stride},
                        {"line_bytes", line_},
                        {"buffer_bytes", rig_.bytes()},
                        {"pattern", "random single cycle, one slot per stride-sized block, one work-item"}});
  }

  void measure(Series& s, uint32_t n, size_t stride, double x) {
    const uint32_t w = rig_.word_bytes();
    const size_t lines_per_block = std::max<size_t>(1, stride / line_);
    std::vector<uint32_t> pos(n);
    for (uint32_t i = 0; i < n; ++i) {
      const size_t offset_lines = digit_sum_mod(i, lines_per_block);
      pos[i] = static_cast<uint32_t>((static_cast<size_t>(i) * stride + offset_lines * line_) / w);
    }
    const auto visit =
        rig_.link_slots(random_visit_order(n, 0x7b1dULL ^ (n * 0x9e3779b97f4a7c15ULL) ^ stride), pos);
    const ChaseTiming t = rig_.time(visit, 1, 0, hc_);
    add_point(s, x, t.samples, t.ns_per_hop);
    ctx_.progress(fmt::format("{} {:>8} slots {:>12.0f} KiB {:8.1f} ns", s.id, n,
                              static_cast<double>(n) * static_cast<double>(stride) / kKiB, t.ns_per_hop));
  }

  ProbeContext& ctx_;
  const DeviceInfo& info_;
  bool quick_, cpu_;
  ChaseRig rig_;
  HarnessConfig hc_;
  size_t line_ = 64;
};

}  // namespace

std::vector<Series> run_tlb_probe(ProbeContext& ctx) { return TlbProbe(ctx).run(); }

}  // namespace gpuscope
