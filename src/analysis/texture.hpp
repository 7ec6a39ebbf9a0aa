// The texture path's findings, from the texture probe's series:
// - texture.latency (a dependent chase through read_imageui over growing
//   footprints) is read by the same staircase inference as the load/store
//   chase (cache_hierarchy.hpp); its levels become texture.L<n>.*.
// - texture.bandwidth (independent fetches by every work-item, footprint on
//   x, GB/s on y) gives texture.bandwidth_gbps: the highest level's rate.
// - texture.pair_small / texture.pair_large give texture.shares_l1 (below).
#pragma once

#include "analysis/cache_hierarchy.hpp"
#include "core/finding.hpp"
#include "core/series.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

// Series ids the texture probe writes and these functions read.
inline constexpr const char* kTextureLatencySeries = "texture.latency";
inline constexpr const char* kTextureBandwidthSeries = "texture.bandwidth";
inline constexpr const char* kTexturePairSmallSeries = "texture.pair_small";
inline constexpr const char* kTexturePairLargeSeries = "texture.pair_large";

// hierarchy_findings() under texture ids: texture.cache_levels,
// texture.L<n>.capacity_bytes, texture.L<n>.latency_ns, texture.dram.latency_ns.
std::vector<Finding> texture_hierarchy_findings(const Hierarchy& h, const std::string& series_id);

// Levels beyond the first are one cache for both paths on every GPU the
// seeds describe (Adreno's UCHE, Mali's and NVIDIA's L2s): a texture level
// L<k>, k >= 2, whose latency stands within 5% of a load/store level's is
// that level seen through the sampler, and of the two capacity readings
// the surer one is the cache's. Where the load/store staircase's (denser
// points, no sampler's time on each hop) is surer, it replaces the texture
// finding's value, interval, confidence and evidence, and the note keeps
// what the texture chase read. `texture` holds texture_hierarchy_findings'
// findings, `loads` hierarchy_findings' for latency.global.
void share_level_capacities(std::vector<Finding>& texture, const std::vector<Finding>& loads);

// For the same reason the texture path has no level past the first that
// the load/store path lacks. Where the texture staircase counts more levels
// than the load/store one and its last level's latency stands within 10%
// of none of the load/store levels (the first included: Adreno's global
// loads skip the texture L1 and start at the UCHE, so the load/store L1 is
// the texture L2), that level is a stretch of the texture sweep's climb to
// DRAM read as a plateau (the texture sweep refines no edges, so a climb
// through a randomly replaced level or through translation misses, caught
// at a few points, can look flat): its findings are dropped,
// texture.cache_levels counts one fewer and its note says why.
// (The H200 through Vulkan: a texture "L3" at 257 ns over 16-52 MiB is the
// far half of its one L2, which the load/store curve climbs through at 260
// ns over 41-56 MiB without a plateau of its own.)
// Returns whether a level was dropped. `texture` and `loads` as above.
bool hold_texture_levels_to_loads(std::vector<Finding>& texture, const std::vector<Finding>& loads);

// texture.bandwidth_gbps: the highest point of the bandwidth curve (y =
// median GB/s of its samples), bounded by that point's sample min..max.
// Empty for an empty series.
std::vector<Finding> texture_bandwidth_findings(const Series& bandwidth);

// Whether the texture path and the load/store path share one first-level
// cache.
//
// The experiment (texture probe): one work-item alternates a dependent
// texture fetch and a dependent global load, each waiting for the other, so
// the time per round is the sum of both latencies. The texture chain cycles
// over a footprint that fits the texture path's first level alone; the
// global chain's footprint G is swept. Two series: the texture chain small
// (pair_small: a few lines) and large (pair_large: about 3/4 of the texture
// first level, `large_texture_bytes`).
// - Separate caches: the large texture chain keeps hitting its own cache
//   whatever G is, so large and small differ by a constant (about nothing:
//   both texture footprints hit) at every G.
// - One shared cache of capacity C: once G + large > C, while G alone
//   still fits (G < C, where pair_small has not risen yet), the two chains
//   evict each other and pair_large rises far above pair_small.
// So: the answer is read only where the global chain alone still hits its
// first level (pair_small within noise of its smallest-G level), from the
// ratio pair_large / pair_small relative to its smallest-G value.
struct TextureSharing {
  bool measurable = false;  // false: the series cannot decide (see note)
  bool shares = false;
  double peak_excess = 1;      // largest ratio (large/small) over its baseline where G alone fits
  double peak_at_bytes = 0;    // the global footprint where that was seen
  int points_tested = 0;       // footprints where G alone fits, beyond the baseline points
  int points_raised = 0;       // of them, clearly raised
  int points_overflowing = 0;  // of them, with G + large >= the first level's capacity
  double confidence = 0;
  std::string note;
};

// first_level_bytes: the texture first level's capacity as the probe read
// it (0: unknown, taken as large_texture_bytes / 0.75). A "no" needs a
// tested footprint where G + large reaches it: short of that, a shared
// cache would not have overflowed and the sweep cannot tell.
TextureSharing infer_texture_sharing(const Series& pair_small, const Series& pair_large,
                                     double large_texture_bytes, double first_level_bytes = 0);

// texture.shares_l1 (bool) when the sharing was measurable; else empty.
std::vector<Finding> texture_sharing_findings(const TextureSharing& s, const std::string& small_id,
                                              const std::string& large_id);

}  // namespace gpuscope::analysis
