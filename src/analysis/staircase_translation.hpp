// What address translation does to a pointer-chase staircase, as the tlb
// probe measured it (HierarchyOptions::translation_levels): how much a TLB
// adds to a random chase, which of its misses are page walks to take out of
// the curve before it is read, and whether a step is translation alone.
// Used by infer_cache_hierarchy (cache_hierarchy.cpp).
#pragma once
#include "analysis/cache_hierarchy.hpp"
#include "core/series.hpp"

#include <vector>

namespace gpuscope::analysis {

// Whether a step of step_ns starting at at_bytes can be translation alone:
// no larger than 1.5x what the levels could have added by far_x (the next
// plateau's first footprint; 0 when none). True when no level was measured.
bool translation_explains(const HierarchyOptions& options, double at_bytes, double step_ns, double far_x);

// What the TLB levels add to a random chase over `footprint` bytes, ns:
// the sum of P max(0, 1 - R/F).
double translation_ns(const std::vector<TranslationLevel>& levels, double footprint);

// Splits `levels` into page walks (a miss costing a quarter of the curve's
// last latency or more, or any miss with `every_level`, which the curve
// does not contradict) and lookups (the rest), appending to each.
void split_translation(const std::vector<TranslationLevel>& levels, const Series& latency, bool every_level,
                       std::vector<TranslationLevel>& walks, std::vector<TranslationLevel>& lookups);

// Whether `corrected` falls by more than 15% below the median of the three
// points before it, at a point the walks were taken out of.
bool falls_where_taken_out(const Series& corrected, const std::vector<TranslationLevel>& walks);

// `latency` with the walks' time taken out of every point and sample (at
// most 4/5 of a point); `largest_ns` gets the most taken out of a point.
Series without_walks(const Series& latency, const std::vector<TranslationLevel>& walks, double& largest_ns);

// split_translation, then the walks taken out of `measured` unless that
// would make it fall (a chase over more bytes is never faster: the walks
// read are too large or too many), in which case they join the lookups and
// the curve stays as measured.
struct WalksTakenOut {
  std::vector<TranslationLevel> walks, lookups;
  Series latency;
  double largest_ns = 0;  // the most taken out of a point
  bool fell = false;      // walks there were, but taking them out made the curve fall
};
WalksTakenOut take_out_walks(const std::vector<TranslationLevel>& levels, const Series& measured, bool every_level);

}  // namespace gpuscope::analysis
