// Cache hierarchy from a pointer-chase latency curve.
//
// The latency probe chases a random cyclic permutation of cache-line-spaced
// slots with one thread, so each load depends on the previous one and the
// curve of latency against footprint is a staircase: one plateau per cache
// level, then DRAM. This file reads the staircase: which plateaus there are,
// where each one ends (the level's capacity) and how high it is (its latency),
// with intervals, confidences and notes on what a person should know.
#pragma once

#include "analysis/segmentation.hpp"
#include "core/finding.hpp"
#include "core/series.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

struct CacheLevel {
  // Footprint in bytes where this level's plateau ends: the curve departs it
  // between capacity_low (last footprint on the plateau) and capacity_high
  // (first footprint clearly above). Unset (0) for dram. When end_reached is
  // false, capacity_bytes = capacity_low = last_x is only a lower bound and
  // capacity_high is 0.
  double capacity_bytes = 0, capacity_low = 0, capacity_high = 0;
  double latency_ns = 0, latency_low = 0,
         latency_high = 0;         // median of the plateau's points, and their min..max
  double first_x = 0, last_x = 0;  // footprint extent of the plateau, bytes
  int points = 0;                  // footprints on the plateau
  double capacity_confidence = 0, latency_confidence = 0;  // 0..1
  // Cap on the latency finding's confidence where the plateau does not hold
  // one value (1: none). latency_confidence, which weighs the level's
  // separation from its neighbours and so the count of levels, is not
  // lowered by it.
  double latency_value_cap = 1;
  bool end_reached = true;                                 // false: the sweep ended on this plateau
  std::string note;                                        // interpretation of this level, may be empty
};

struct Hierarchy {
  std::vector<CacheLevel> levels;  // L1..Ln, nearest first
  std::optional<CacheLevel> dram;  // set when the sweep reached past the last cache
  std::vector<std::string> notes;  // about the hierarchy as a whole; each level carries its own
  // Where a rise was read as address translation and the curve cut there
  // (HierarchyOptions::translation_levels), the count of levels and DRAM's
  // latency rest on the tlb probe's reading: its confidence. 1 otherwise.
  double translation_confidence = 1;
};

// One TLB level as the tlb probe measured it: a random chase larger than
// its reach misses it, and each miss adds up to its penalty to the load.
// Translation may show from this share of a TLB level's reach (the low
// end of the measured interval) on: a chase's misses begin before the
// reach is full where pages collide in a set or replacement is not LRU.
inline constexpr double kTranslationOnsetOfReach = 0.7;

struct TranslationLevel {
  double reach_bytes = 0;  // the low end of the measured reach (where misses may begin)
  double penalty_ns = 0;
  double reach_estimate_bytes = 0;  // the measured reach itself; 0: reach_bytes
  double confidence = 1;            // of the tlb probe's reading
  // The tlb probe saw a miss add its whole penalty (0.7x or more) to loads
  // that miss the first cache level too (memory.tlb.miss_penalty_past_l1_ns):
  // a page walk, whatever serves the data.
  bool past_l1 = false;
};

// The longest cache line of the GPUs gpuscope knows: 128 bytes (NVIDIA's L1
// and L2; the mobile GPUs of the sim's presets have 64).
inline constexpr double kLongestLineBytes = 128;

struct HierarchyOptions {
  // Steps starting beyond this footprint are address translation (TLB reach), not caches.
  double translation_threshold_bytes = 512.0 * 1024 * 1024;
  // Where measured: a step past the threshold is translation only if
  // translation can explain its size, at most 1.5x the summed penalties of
  // the levels whose reach it is past; a larger one is a cache running out
  // (a CPU's 1 MiB L2 beyond its 256 KiB first-level TLB reach). Empty: any
  // step past the threshold is translation.
  std::vector<TranslationLevel> translation_levels;
  // Where the threshold came from, for the note ("no GPU cache is that large"
  // when empty; analyze.cpp sets it from the tlb probe's measured reach).
  std::string translation_basis;
  // Every translation level taken out of the curve as page walks are, the
  // cheap ones too. infer_cache_hierarchy sets it itself where the curve
  // shows a cache running out past a TLB's reach (see there).
  bool translation_out_everywhere = false;
  // Adjacent plateaus closer than this in latency are one level.
  double min_step_ratio = 1.15;
  // A plateau needs this many points spanning at least this many octaves of
  // footprint: a ramp between levels is chopped by the segmentation into short
  // pieces (1-2 points each at 2-4 points per octave), and these never qualify.
  // 3 points at 4 per octave span 0.5 octave; the slack allows for footprints
  // rounded to whole lines or pages.
  int min_plateau_points = 3;
  double min_plateau_octaves = 0.45;
  // A sweep that stops short of this cannot tell DRAM from a large last-level
  // cache (CPU L3s and GPU last-level caches reach 32-256 MiB), so its last
  // plateau is then reported as a cache whose end was not reached.
  double dram_min_footprint_bytes = 64.0 * 1024 * 1024;
  // DRAM latency measured on another path (the load/store staircase, for the
  // texture path's): a sweep stopped short whose last plateau lies within
  // [0.9, 1.3]x of it ends on DRAM too (the texture path may add its
  // sampler's time, not take any away). 0: unknown.
  double dram_latency_hint_ns = 0;
  // The chase's slots share cache lines (the texture probe's 2D path: every
  // pixel a slot): rises are read with the line-revisit miss model.
  bool slots_share_lines = false;
  // The spacing of the chase's slots (the series' stride_bytes); 0: unknown.
  // Where it is under kLongestLineBytes, levels beyond the first may hold two
  // slots to a line (64-byte slots, the first level's line, in an L2's
  // 128-byte lines), and their rises may be read with the model of random
  // replacement under such line revisits (analysis/miss_model.hpp).
  double slot_bytes = 0;
  // Whether a level may be the far half of a split cache (is_far_half_of_split):
  // GPUs' L2s split across the chip's partitions; a CPU core's caches do
  // not, and there a level so little slower is a TLB's reach or a
  // co-tenant inside one cache. analyze.cpp clears it for CPU devices.
  bool split_caches = true;
  std::string dram_hint_basis;  // where the hint came from, for the note
  // The curve has left a plateau once it is this many noise sigmas above it
  // (or half way to the next level, when that is nearer).
  double departure_sigmas = 3.0;
  double min_relative_noise = k_min_relative_noise;  // floor of the per-point noise, relative
};

// Reads the staircase of a latency series (x = footprint bytes, y = ns per
// dependent load, sorted by x). Never throws on short or odd curves: it
// returns what can be said, with notes.
Hierarchy infer_cache_hierarchy(const Series& latency, const HierarchyOptions& options = {});

// The name of the level at `index` from the nearest (0): L1, L2, ...
std::string level_name(size_t index);

// Findings under the contract ids (memory.cache_levels, memory.L<n>.capacity_bytes,
// memory.L<n>.latency_ns, memory.dram.latency_ns), citing series_id as evidence.
// Empty when the hierarchy holds no level.
std::vector<Finding> hierarchy_findings(const Hierarchy& h, const std::string& series_id);

// Whether a level `latency_ratio` times as slow as the level before it, with
// `capacity_ratio` times its capacity (both ends measured), is the far half
// of a split cache rather than a cache of its own: NVIDIA H100/H200's L2
// shows as a second plateau under 2x slower and 1.5-3x larger. The level
// before is then the near half, and this level's capacity the whole cache.
bool is_far_half_of_split(double latency_ratio, double capacity_ratio);

// Footprints (bytes, multiples of granule_bytes, not already measured) where
// one more measurement would most sharpen the inference: the geometric
// midpoints of intervals where the curve changes relative to noise. Those
// inside an edge of the staircase (from a level's last plateau footprint to
// the next level's first) come first, the edges taking turns (each edge's
// largest change, then each one's next), then the other changes, largest
// first. Intervals whose x ratio is already below min_ratio, and changes
// within 2 sigma of noise, are not bisected. At most max_points.
std::vector<double> refinement_footprints(const Series& latency, size_t max_points, double min_ratio,
                                          double granule_bytes);

}  // namespace gpuscope::analysis
