// What address translation does to a pointer-chase staircase
// (staircase_translation.hpp).
#include "analysis/staircase_translation.hpp"

#include "core/stats.hpp"

#include <algorithm>

namespace gpuscope::analysis {

// Whether a step of step_ns starting at at_bytes can be translation alone
// (HierarchyOptions::translation_levels). Past a reach R the chase misses on
// about 1 - R/F of its loads, so the step approaches the penalty from below:
// where the step is complete by far_x (the next plateau's first footprint;
// 0 when none), translation could have added at most P (1 - R/far_x) there,
// with R the low end of the measured reach. A step larger than that is a
// cache running out (a 3 MiB L2 behind a TLB of 2.8 to 16 MiB reach: the
// step is whole by 3.3 MiB, where translation adds at most 15% of P).
bool translation_explains(const HierarchyOptions& options, double at_bytes, double step_ns, double far_x) {
  if (options.translation_levels.empty()) return true;
  double penalty_ns = 0, by_far_ns = 0;
  for (const TranslationLevel& t : options.translation_levels) {
    if (kTranslationOnsetOfReach * t.reach_bytes < at_bytes) penalty_ns += t.penalty_ns;
    if (far_x > 0) by_far_ns += t.penalty_ns * std::max(0.0, 1 - t.reach_bytes / far_x);
  }
  if (far_x > 0) penalty_ns = std::min(penalty_ns, by_far_ns);
  return step_ns <= 1.5 * penalty_ns;
}

// What the TLB levels `levels` add to a random chase over `footprint` bytes:
// the sum of P max(0, 1 - R/F), with R the measured reach (a chase of F
// bytes misses a TLB of reach R on about 1 - R/F of its loads: each page
// holds many slots, visited in random order). Zero within every reach.
double translation_ns(const std::vector<TranslationLevel>& levels, double footprint) {
  double sum = 0;
  for (const TranslationLevel& t : levels) {
    const double reach = t.reach_estimate_bytes > 0 ? t.reach_estimate_bytes : t.reach_bytes;
    sum += t.penalty_ns * std::max(0.0, 1 - reach / footprint);
  }
  return sum;
}

// The TLB levels whose misses are page walks: those costing at least a
// quarter of the curve's last latency (DRAM's, with translation). A walk
// reads the page tables from memory and adds its time to the load whatever
// level then serves the data (the seeds' Adreno 530: 266 ns up to 16 MB,
// over 500 ns at 256 MB). A cheaper miss is a lookup in a second-level TLB,
// which devices overlap with the data's own miss: an H100's costs 80-130
// cycles on an L1 hit and 10 on an L2 hit (bench/cuda_tlb.cu), and the CI
// VM's 2.4 ns (on L1 hits) leaves a native chase as fast on 4 KiB pages
// as on 2 MiB ones past its L1 (tests/data/pocl_epyc/host_chase.txt), so
// taking it out of every load would take it from loads that never paid it.
// A cheaper miss that the tlb probe saw add its whole penalty to loads
// missing the first cache level too (TranslationLevel::past_l1) is a walk
// as well, where it is a tenth of the last latency or more: below that, on
// CPUs, the strided chase pays a second-level lookup on L2 hits that a
// random chase with many loads a page does not (the Emerald Rapids VM: +3
// ns on 4 KiB-strided L2 hits, a native chase as fast on 4 KiB pages as on
// 2 MiB ones). `walks` gets the levels that are page walks, `lookups` the
// others. Walks the curve contradicts are lookups too: where a chase runs
// faster than its first level's latency plus 0.7x what the walks alone
// would add (and that is a tenth of the first latency or more, well past
// noise), they are not in it (a tlb reading from another path, or too
// large).
void split_translation(const std::vector<TranslationLevel>& levels, const Series& latency, bool every_level,
                       std::vector<TranslationLevel>& walks, std::vector<TranslationLevel>& lookups) {
  const double last_ns = latency.points.empty() ? 0 : latency.points.back().y;
  for (const TranslationLevel& t : levels) {
    const bool walk =
        every_level || t.penalty_ns >= 0.25 * last_ns || (t.past_l1 && t.penalty_ns >= 0.1 * last_ns);
    (last_ns > 0 && walk ? walks : lookups).push_back(t);
  }
  if (walks.empty()) return;
  const double first_ns = latency.points.front().y;
  for (const Point& p : latency.points)
    if (const double ns = translation_ns(walks, p.x); ns > 0.1 * first_ns && p.y < first_ns + 0.7 * ns) {
      lookups.insert(lookups.end(), walks.begin(), walks.end());
      walks.clear();
      return;
    }
}

// Whether `corrected` falls by more than 15% below the median of the three
// points before it, at a point the walks were taken out of.
bool falls_where_taken_out(const Series& corrected, const std::vector<TranslationLevel>& walks) {
  const auto& pts = corrected.points;
  for (size_t i = 3; i < pts.size(); ++i) {
    if (translation_ns(walks, pts[i].x) <= 0) continue;
    const double before = median(std::vector<double>{pts[i - 3].y, pts[i - 2].y, pts[i - 1].y});
    if (pts[i].y < 0.85 * before) return true;
  }
  return false;
}

// The curve with the page walks' time taken out of every point and sample:
// what is left rises only where a cache runs out. Read raw, a TLB whose
// reach lies below the last cache's capacity adds its rise to the cache's
// (a 1 MiB random-replacement L2 behind a 1 MiB TLB read as 2.4 MiB, the
// system cache behind it not seen at all). At most 4/5 of a point is taken
// out: a tlb reading that large is doubtful, and no latency is read as
// nothing. `largest_ns`: the most taken out of a point.
Series without_walks(const Series& latency, const std::vector<TranslationLevel>& walks, double& largest_ns) {
  Series out = latency;
  largest_ns = 0;
  for (Point& p : out.points) {
    const double ns = std::min(translation_ns(walks, p.x), 0.8 * p.y);
    if (ns <= 0) continue;
    largest_ns = std::max(largest_ns, ns);
    p.y -= ns;
    for (double& v : p.samples) v = std::max(v - ns, 0.2 * v);
  }
  return out;
}

WalksTakenOut take_out_walks(const std::vector<TranslationLevel>& levels, const Series& measured, bool every_level) {
  WalksTakenOut out;
  split_translation(levels, measured, every_level, out.walks, out.lookups);
  out.latency = out.walks.empty() ? measured : without_walks(measured, out.walks, out.largest_ns);
  if (!out.walks.empty() && falls_where_taken_out(out.latency, out.walks)) {
    out.fell = true;
    out.lookups.insert(out.lookups.end(), out.walks.begin(), out.walks.end());
    out.walks.clear();
    out.latency = measured;
    out.largest_ns = 0;
  }
  return out;
}

}  // namespace gpuscope::analysis
