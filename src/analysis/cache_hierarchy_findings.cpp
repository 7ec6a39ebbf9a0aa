// The staircase read by infer_cache_hierarchy, as findings under the
// contract ids.
#include "analysis/cache_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::analysis {

std::vector<Finding> hierarchy_findings(const Hierarchy& h, const std::string& series_id) {
  std::vector<Finding> findings;
  if (h.levels.empty()) return findings;
  const std::string segmentation =
      "optimal piecewise-constant segmentation of log latency (modified-BIC penalty)";

  // The count is as sure as its least sure level (each level's latency
  // confidence weighs its separation from its neighbours), and less sure when
  // the sweep never reached DRAM: a further level may lie beyond.
  double count_confidence = h.dram ? 1.0 : 0.5;
  double least_level = 1.0;
  for (const CacheLevel& level : h.levels) least_level = std::min(least_level, level.latency_confidence);
  count_confidence *= least_level;
  count_confidence = std::min(count_confidence, 0.95 * h.translation_confidence);
  std::string all_notes;
  for (const std::string& note : h.notes) all_notes += (all_notes.empty() ? "" : " ") + note;
  findings.push_back(
      {"memory.cache_levels",
       static_cast<double>(h.levels.size()),
       "",
       std::nullopt,
       std::nullopt,
       count_confidence,
       {series_id},
       "Number of latency plateaus before DRAM in the pointer-chase curve, by " + segmentation +
           "; ramps, falling stretches, stretches climbing as much as they start above the "
           "level before, steps below the minimum ratio and rises from address translation are "
           "not levels.",
       all_notes});

  for (size_t k = 0; k < h.levels.size(); ++k) {
    const CacheLevel& level = h.levels[k];
    const std::string prefix = "memory." + level_name(k);
    Finding capacity{prefix + ".capacity_bytes", level.capacity_bytes, "B", level.capacity_low, std::nullopt,
                     level.capacity_confidence,  {series_id},          "",  level.note};
    if (level.end_reached) {
      capacity.high = level.capacity_high;
      capacity.method =
          "Latencies across the rise to the next level read as hit fractions and fitted with a miss "
          "model (sharp or uneven set overflow: where half the loads hit; random replacement or sets "
          "filling together: where misses begin); the interval spans the rise from the last point on the "
          "plateau to the first "
          "at the next level; plateaus by " +
          segmentation + ".";
    } else {
      capacity.method =
          "Lower bound: the largest footprint measured, still on this level's plateau; plateaus by " +
          segmentation + ".";
    }
    findings.push_back(std::move(capacity));
    findings.push_back(
        {prefix + ".latency_ns",
         level.latency_ns,
         "ns",
         level.latency_low,
         level.latency_high,
         std::min(level.latency_confidence, level.latency_value_cap),
         {series_id},
         fmt::format("Median latency of the {} footprints on this level's plateau (bounds: their min "
                     "and max); plateaus by {}.",
                     level.points, segmentation),
         level.note});
  }

  if (h.dram) {
    findings.push_back(
        {"memory.dram.latency_ns",
         h.dram->latency_ns,
         "ns",
         h.dram->latency_low,
         h.dram->latency_high,
         h.dram->latency_confidence,
         {series_id},
         fmt::format("Median latency of the {} footprints on the last plateau beyond the caches "
                     "(bounds: their min and max); plateaus by {}.",
                     h.dram->points, segmentation),
         h.dram->note});
  }
  return findings;
}

}  // namespace gpuscope::analysis
