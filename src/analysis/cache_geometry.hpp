// How the caches are cut up, from the geometry probe's chases: the unit a
// level fetches (pairs of loads d bytes apart), the line it allocates
// (capacity seen at growing slot strides), and whether compute units share
// it (concurrent chases from one work-group per unit).
#pragma once

#include "core/finding.hpp"
#include "core/series.hpp"

#include <optional>
#include <vector>

namespace gpuscope::analysis {

// geometry.pairs_*: y(d) = (anchor miss + partner) / 2. The partner hits
// while d < the fetch unit and misses from it on, so the fetch unit is the
// smallest d from which y stays in the top quarter of its range (several
// steps, as in the far series, end at the last one). Unset when y rises by
// less than 20% over the sweep (the partner always hit, or always missed).
struct FetchReading {
  double fetch_bytes = 0;
  double hit_ns = 0, miss_ns = 0;  // y at the smallest and the largest d
};
//
// first_step: read the first step instead (the smallest d from which y
// stays above the bottom quarter of its range): the near series' own
// level's unit. Its anchors may miss the second level too (an 8 MiB
// footprint past a 2 MiB L2): then a sectored first level shows a small
// step at its sector (the partner then hits the second level) before the
// large one at the second level's line, and the large one is not the
// first level's.
std::optional<FetchReading> read_pairs_curve(const Series& pairs, bool first_step = false);

// geometry.pairs_near over a second level exclusive of the first (a victim
// cache: a line it hands up to the first level leaves it). The anchor's
// line moves up; a partner in that line but past the first level's fill
// unit then finds it in neither level and comes from the level beyond, so y
// rises above its value at the largest d (both loads hitting the second
// level) and falls back to it at the second level's line, where the
// partner's bytes were never in the anchor's line. Set where the curve
// stands 15% or more above its last point before it (a bump), with
// fetch_bytes the smallest d past the bump's peak from which y stays within
// a quarter of the way from its last point to the peak, hit_ns the last
// point's y and miss_ns the peak's. An inclusive second level keeps the
// line and shows no bump: y rises at most to its last point.
std::optional<FetchReading> read_exclusive_pairs(const Series& near);

// The footprint at which each geometry.line_<S> curve (or any chase curve
// with a stride_bytes meta) is half way from the first level's latency to
// the next plateau the curves share: (S, capacity bytes), for the curves
// that leave the level. The geometry probe reads its 32 B sweep with it.
std::vector<std::pair<double, double>> half_hit_capacities(const std::vector<const Series*>& lines);

// geometry.line_<S>: the first level's capacity seen at each slot stride S
// (the half-hit footprint). Below the line, strides share lines and the
// capacity hardly grows with S; from the line on each slot owns a line and
// the capacity doubles with each doubling of S. The line is the L of the
// model C * max(1, S / L) that fits every stride's capacity best.
struct LineReading {
  double line_bytes = 0;
  bool upper_bound_only = false;                              // capacity doubles from the smallest stride on
  bool lower_bound_only = false;                              // no doubling even at the largest strides
  std::vector<std::pair<double, double>> capacity_by_stride;  // (S, capacity bytes)
  // Sum of squared log residuals of the best model and of the next best L:
  // a runner-up that fits nearly as well leaves the line in doubt.
  double misfit = 0, runner_up_misfit = 0;
};
std::optional<LineReading> read_line_curves(const std::vector<const Series*>& lines);

// geometry.shared_1 against geometry.shared_<G>: for each cache level of the
// lone chase, the G-group chase's latency at the middle of that level's
// plateau. Within the level's own latency: private per compute unit; near
// or past the next level's: shared (each group gets 1/G of it).
struct SharingReading {
  int level = 0;  // 1-based, as in memory.L<n>
  bool shared = false;
  double probe_footprint = 0;  // per group, bytes
  double lone_ns = 0, all_ns = 0, next_ns = 0;
};
std::vector<SharingReading> read_sharing(const Series& lone, const Series& all);

// memory.L1.fetch_bytes (near pairs), memory.L2.fetch_bytes (mid pairs,
// where cache_levels is 3 or more; from the near pairs' bump where they
// show the second level exclusive, read_exclusive_pairs),
// memory.L<last>.fetch_bytes (far pairs, last = cache_levels, the number of
// levels the latency probe found, 2 when unknown; not for an exclusive
// second level, which is filled by the first level's victims, not from
// memory), memory.line_bytes, memory.L<n>.shared_by_cus (for n up to
// cache_levels when known), from whichever series are given. The bump is
// read on GPUs only (`cpu` false): a CPU's line prefetchers bring partners
// in or not whatever the inclusion, and PoCL runs recorded on Emerald
// Rapids, Zen 4 and Skylake-class Xeons all rise above their last point at
// 64 or 128 B.
std::vector<Finding> geometry_findings(const Series* pairs_near, const Series* pairs_mid,
                                       const Series* pairs_far, const std::vector<const Series*>& lines,
                                       const Series* shared_lone, const Series* shared_all, int cache_levels,
                                       bool cpu = false);

}  // namespace gpuscope::analysis
