// Probe `geometry`: how the caches are cut up, by three pointer-chase
// experiments (analysis/cache_geometry reads them).
//
// 1. Fetch granularity: geometry.pairs_near, geometry.pairs_far,
//    geometry.pairs_mid
//    x = pair distance d (bytes), y = ns per load. Anchors 512 B apart on a
//    random cycle; each anchor's word points d bytes further on, and that word
//    to the next anchor. The anchor load misses the level under test (the
//    footprint is many times it: "near" misses the first level and fits the
//    second, "mid" misses the second and fits a third, "far" misses every
//    cache); the partner load hits exactly when the anchor's miss brought
//    its bytes in, i.e. when d < the unit the level fetches. So ns per load
//    is (miss + hit) / 2 for small d and jumps to the miss latency at d =
//    the fetch unit: a sector on NVIDIA (32 B of a 128 B line), a whole line
//    on CPUs. "mid" and "far" show the first level's step and then the
//    level's under test (the second's from the third; the last's from
//    DRAM).
//
// 2. Line (allocation unit): geometry.line_<S>
//    x = footprint (bytes), y = ns per hop: the latency probe's random chase
//    with one slot in each S-byte block, S = 32 .. 512, at staggered offsets
//    within the blocks (so that the slots spread over every cache set). A
//    cache holds C / line lines.
//    For S <= line every line of the footprint is touched and the chase
//    leaves the level at footprint C; for S > line each slot takes a line of
//    its own and the chase leaves it at C * S / line. The stride at which the
//    capacity seen starts to grow is the line: 128 B on NVIDIA's L1 even
//    though it fetches 32 B sectors. The 32 B sweep runs first, from 2 KiB
//    up; the larger strides are swept around the first level's end it shows.
//
// 3. Sharing: geometry.shared_1, geometry.shared_<G>
//    x = footprint per work-group (bytes), y = ns per hop. G = compute units
//    work-groups of one work-item each chase a private region at once (the
//    driver spreads them one per compute unit), against one group alone. A
//    level private to each unit holds every group's region as it held the
//    lone one; a shared level holds only 1/G of it per group, so the G curve
//    leaves that level's plateau G times earlier.
#include "analysis/cache_geometry.hpp"
#include "analysis/cache_hierarchy.hpp"
#include "core/error.hpp"
#include "probes/chase_rig.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace gpuscope {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr uint32_t kAnchorBytes = 512;

// i's bits folded by XOR into log2(m) bits (m a power of two): slots whose
// indices differ only in high bits (the ones a modulo-indexed cache maps to
// the same set) get every offset in turn, since XOR with a shifted block of
// bits is a bijection on the folded value.
size_t skew(size_t i, size_t m) {
  const int bits = std::countr_zero(m);
  if (bits == 0) return 0;
  size_t f = 0;
  for (; i; i >>= bits) f ^= i & (m - 1);
  return f;
}

class GeometryProbe {
 public:
  explicit GeometryProbe(ProbeContext& ctx)
      : ctx_(ctx),
        info_(ctx.device.info()),
        quick_(ctx.options.quick),
        cpu_(info_.type == "cpu"),
        groups_(std::max<uint32_t>(1, info_.compute_units)),
        rig_(ctx, planned_bytes(), 32 * kMiB, groups_) {
    hc_ = ctx.options.harness;
    hc_.target_launch_ms = std::min(hc_.target_launch_ms, 1.5);
    hc_.min_samples = std::min(hc_.min_samples, 4);
    hc_.max_samples = std::min(hc_.max_samples, 7);
    const size_t line =
        info_.global_cache_line_bytes ? std::bit_ceil<size_t>(info_.global_cache_line_bytes) : 64;
    line_ = std::max<size_t>(line, rig_.word_bytes());
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    std::vector<Series> out;
    const std::vector<size_t> strides =
        quick_ ? std::vector<size_t>{32, 64, 128} : std::vector<size_t>{32, 64, 128, 256, 512};
    // The smallest stride's sweep runs first over the whole range; where it
    // shows the first level's end, the others are swept around it, and the
    // near pairs are sized by it.
    std::optional<FirstEdge> edge;
    double first_capacity = 0;
    std::vector<Series> lines;
    for (size_t s : strides) {
      if (s < rig_.word_bytes() || (!lines.empty() && budget.exhausted())) continue;
      lines.push_back(line_series(s, lines.empty() ? std::nullopt : edge));
      if (lines.size() == 1) {
        edge = first_edge(lines.back());
        const auto c = analysis::half_hit_capacities({&lines.back()});
        if (!c.empty()) first_capacity = c.front().second;
      }
    }

    // Footprints: what the chase occupies in a cache is one or two lines per
    // 512 B anchor (a quarter of the footprint at 128 B lines, an eighth at
    // 64 B). "near": 16x the first level's capacity as the 32 B sweep read
    // it (2 to 8x it in lines: past the first level, inside a second of 16x
    // the first or more), at most 8 MiB on a GPU (2 MiB of lines, 8x any GPU
    // L1, inside the L2) and 2 MiB on a CPU (256-512 KiB of lines); the most
    // alone overruns a phone's 256 KiB to 2 MiB L2, and the pairs then show
    // the next level's fill. "far": 2 GiB on a GPU (512 MiB of lines,
    // ~10x a 50-60 MB L2, so nine anchors in ten miss it); on a CPU 1 GiB
    // (128-256 MiB of lines, past a 32 MiB L3), left out of --quick (too
    // large for CI).
    const double most_near = static_cast<double>(cpu_ ? 2 * kMiB : 8 * kMiB);
    const size_t near = static_cast<size_t>(
        first_capacity > 0 ? std::clamp(16 * first_capacity, 64.0 * kKiB, most_near) : most_near);
    const size_t far = std::min<size_t>(rig_.bytes(), cpu_ ? 1024 * kMiB : 2048 * kMiB);
    out.push_back(pairs("geometry.pairs_near", near));
    if (first_capacity > 0) out.back().meta["first_level_bytes"] = first_capacity;
    if (!quick_ || !cpu_) out.push_back(pairs("geometry.pairs_far", far));
    for (Series& s : lines) out.push_back(std::move(s));

    if (groups_ > 1 && !budget.exhausted()) {
      out.push_back(shared_series(1));
      const std::optional<size_t> mid = mid_footprint(out.back());
      out.push_back(shared_series(groups_));
      if (mid && !budget.exhausted() && (!quick_ || !cpu_)) {
        out.push_back(pairs("geometry.pairs_mid", *mid));
        out.back().meta["footprint_from"] = "geometry.shared_1";
      }
    } else if (groups_ <= 1) {
      ctx_.progress("geometry: one compute unit; no sharing experiment");
      out.back().meta["sharing_not_run"] = "one compute unit: no other unit to share a cache with";
    } else {
      out.back().meta["sharing_not_run"] = "the geometry probe's time budget ran out before the sharing sweep";
    }
    out.back().meta["wall_s"] = budget.elapsed_s();
    return out;
  }

 private:
  // 2 GiB on a GPU (the far pairs; G regions of up to 8 MiB), 1 GiB on a
  // CPU (64 MiB quick).
  size_t planned_bytes() const {
    size_t want = cpu_ ? (quick_ ? 64 : 1024) * kMiB : 2048 * kMiB;
    if (info_.max_alloc_bytes) want = std::min<size_t>(want, info_.max_alloc_bytes);
    if (info_.global_mem_bytes) want = std::min<size_t>(want, info_.global_mem_bytes / 4);
    return std::bit_floor(std::max<size_t>(want, 32 * kMiB));
  }

  Series chase_series(const std::string& id, Axis x, nlohmann::json meta) const {
    meta["kernel"] = "chase_layout/chase_groups";
    meta["reported_line_bytes"] = line_;
    return make_series(id, "geometry", std::move(x), {"latency", "ns"}, std::move(meta));
  }

  void add(Series& s, double x, const ChaseTiming& t) {
    add_point(s, x, t.samples, t.ns_per_hop);
    ctx_.progress(fmt::format("{} {:>12.0f} {:8.2f} ns", s.id, x, t.ns_per_hop));
  }

  // The mid pairs' footprint F, from the sharing sweep's lone chase: where
  // its staircase shows a third level that runs out within it, one whose
  // anchors miss the second level and hit the third, at the geometric
  // middle of [4 C2, C3] (capacities as the staircase reads them). The
  // anchors' lines, F / 512 x 128 B = F / 4 at 128 B lines, fall in a
  // quarter of the sets of a cache indexed by the bits above the line, so
  // such a cache holds C / 4 of them: they overrun the second level from F
  // = C2 (4x at 4 C2) and fit the third up to F = C3. A cache that hashes
  // its sets holds C of them, inside the same bounds. None where the range
  // is empty or past the rig, and on a unit alone (no sharing sweep).
  std::optional<size_t> mid_footprint(const Series& lone) const {
    const analysis::Hierarchy h = analysis::infer_cache_hierarchy(lone);
    if (h.levels.size() < 3 || !h.levels[2].end_reached) return std::nullopt;
    const double lo = 4 * h.levels[1].capacity_bytes, hi = h.levels[2].capacity_bytes;
    if (!(lo > 0) || lo > hi) return std::nullopt;
    const auto footprint = static_cast<size_t>(std::sqrt(lo * hi)) / kAnchorBytes * kAnchorBytes;
    if (footprint > rig_.bytes()) return std::nullopt;
    return footprint;
  }

  Series pairs(const std::string& id, size_t footprint) {
    Series s =
        chase_series(id, {"pair_distance", "B"},
                    {{"footprint_bytes", footprint},
                     {"anchor_bytes", kAnchorBytes},
                     {"pattern", "random cycle of anchors, each followed by a load pair_distance further"}});
    const uint32_t w = rig_.word_bytes();
    const auto n = static_cast<uint32_t>(footprint / kAnchorBytes);
    const auto order = random_visit_order(n, 0xfe7c4ULL ^ n);
    for (uint32_t d = w; d <= kAnchorBytes / 2; d *= 2) {
      const auto visit = rig_.link_pairs(order, kAnchorBytes / w, d / w);
      add(s, d, rig_.time(visit, 1, 0, hc_));
    }
    return s;
  }

  // Where the smallest stride's sweep leaves the first level: `inside` is
  // its last footprint below 1.5x its first point's latency, `past` the
  // next one.
  struct FirstEdge {
    double inside = 0, past = 0;
  };
  static std::optional<FirstEdge> first_edge(const Series& s) {
    const auto& p = s.points;
    for (size_t k = 1; k < p.size(); ++k)
      if (p[k].y >= 1.5 * p.front().y) return FirstEdge{p[k - 1].x, p[k].x};
    return std::nullopt;
  }

  // Footprints, 2 per octave (1 quick). Stride S sees the first level end at
  // C * max(1, S / line): between C and C * S / 32 for lines of 32 B and up.
  // With `edge` (C between its inside and past footprints), the sweep runs
  // from a quarter of `inside` (at least 8 slots) to 8x past * S / 32: a
  // plateau inside the level, the end at any line, the next level's plateau.
  // Without one (the smallest stride's own sweep, or a level it did not
  // leave), from 2 KiB up to (S / 32) x 1 MiB on a GPU ((S / 32) x 256 KiB
  // on a CPU): a phone's first level can hold 8 KiB or less, and the
  // smallest stride starts below that.
  Series line_series(size_t stride, std::optional<FirstEdge> edge) {
    Series s =
        chase_series(fmt::format("geometry.line_{}", stride), {"footprint", "B"},
                    {{"stride_bytes", stride}, {"pattern", "random single cycle, slots stride_bytes apart"}});
    const uint32_t w = rig_.word_bytes();
    const double scale = static_cast<double>(stride) / 32;
    double bottom = scale * 2 * kKiB;
    double top = scale * (cpu_ ? 256 * kKiB : kMiB);
    if (edge) {
      bottom = std::max(edge->inside / 4, 8.0 * static_cast<double>(stride));
      top = std::min(top, 8 * edge->past * scale);
      s.meta["swept_around_bytes"] = edge->past;
    }
    const double step = quick_ ? 2.0 : std::sqrt(2.0);
    for (double f = bottom; f <= std::min(top, static_cast<double>(rig_.bytes())) * 1.0001; f *= step) {
      const auto n = static_cast<uint32_t>(std::max(2.0, std::round(f / static_cast<double>(stride))));
      // Slot i sits skew(i) x 32 B into its S-byte block: each slot still
      // owns one line of its own when S > line, but the slots spread over
      // all of the cache's sets (a power-of-two stride alone would use only
      // 1 / (S / line) of them and halve the capacity seen at each doubling,
      // whatever the line). The skew must not repeat with a period that
      // divides the sets' period in i: (i * 5 mod S/32), used before, did on
      // a cache indexed by address bits (set = line mod sets), where slots i
      // and i + sets / (S / line) then shared a set and a 128 B stride saw
      // the same capacity as a 64 B one.
      std::vector<uint32_t> pos(n);
      for (uint32_t i = 0; i < n; ++i)
        pos[i] = static_cast<uint32_t>((static_cast<size_t>(i) * stride + skew(i, stride / 32) * 32) / w);
      const auto visit = rig_.link_slots(random_visit_order(n, 0x11e5ULL ^ n ^ stride), pos);
      add(s, static_cast<double>(n) * static_cast<double>(stride), rig_.time(visit, 1, 0, hc_));
    }
    return s;
  }

  // Per-group footprints 1 KiB .. the region, 2 per octave (1 quick): a
  // phone's 8 KiB first level still gets a plateau of 3 or more. The region
  // is 8 MiB, or twice the last-level cache the driver reports when that is
  // larger (its sharing is read where the lone chase leaves it), at most
  // what the buffer holds for G groups.
  //
  // Regions start kRegionSkewBytes apart beyond their size: with a power of
  // two between them every group's first pages fall into the same set of a
  // set-associative TLB (4 ways of 16 KiB pages: regions 8 MiB apart thrash
  // one set) and every group's lines into the same cache sets. The skew is
  // an odd number of 4 KiB pages and not a whole number of any larger page,
  // so consecutive regions start in different sets of either.
  static constexpr size_t kRegionSkewBytes = 2 * kMiB + 64 * kKiB + 16 * kKiB + 4 * kKiB;
  size_t shared_region_bytes() const {
    const size_t want = std::max<size_t>(8 * kMiB, 2 * info_.global_cache_bytes);
    size_t region = std::bit_floor(std::min<size_t>(want, rig_.bytes() / groups_));
    while (region > 64 * kKiB && (region + kRegionSkewBytes) * groups_ > rig_.bytes()) region /= 2;
    return region;
  }
  Series shared_series(uint32_t groups) {
    const uint32_t w = rig_.word_bytes();
    const size_t region = shared_region_bytes();
    const size_t spacing = (region + kRegionSkewBytes) * groups_ <= rig_.bytes() ? region + kRegionSkewBytes : region;
    Series s =
        chase_series(fmt::format("geometry.shared_{}", groups), {"footprint_per_group", "B"},
                    {{"groups", groups},
                     {"compute_units", info_.compute_units},
                     {"stride_bytes", line_},
                     {"region_bytes", region},
                     {"region_spacing_bytes", spacing},
                     {"pattern", "one work-item per group, each chasing a random cycle in its own region"}});
    const double step = quick_ ? 2.0 : std::sqrt(2.0);
    for (double f = 1 * kKiB; f <= static_cast<double>(region) * 1.0001; f *= step) {
      const auto n = static_cast<uint32_t>(std::max(2.0, std::round(f / static_cast<double>(line_))));
      const auto visit = rig_.link_regions(random_visit_order(n, 0x5a4eULL ^ n),
                                           static_cast<uint32_t>(line_ / w), spacing / w, groups);
      add(s, static_cast<double>(n) * static_cast<double>(line_), rig_.time(visit, groups, spacing / w, hc_));
    }
    return s;
  }

  ProbeContext& ctx_;
  const DeviceInfo& info_;
  bool quick_, cpu_;
  uint32_t groups_;
  ChaseRig rig_;
  HarnessConfig hc_;
  size_t line_ = 64;
};

}  // namespace

std::vector<Series> run_geometry_probe(ProbeContext& ctx) { return GeometryProbe(ctx).run(); }

}  // namespace gpuscope
