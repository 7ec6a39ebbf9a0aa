// Bandwidth per memory level, from the bandwidth probe's curves
// (probes/bandwidth/), and what the work-group sweep says about how work
// spreads over the cores; local memory from the local probe's series.
//
// The bandwidth curves (GB/s against footprint, bytes) fall in steps as the
// footprint leaves each cache. Each level's bandwidth is read on the flat
// run of points inside that level's footprint window. The windows come from
// the latency probe's capacities when the same results hold them (the chase
// knows where each level ends far better than a bandwidth curve, whose
// steps are smeared by partial hits); without them the read curve is split
// into flat runs on its own and the runs are taken as the levels in order.
#pragma once

#include "analysis/cache_hierarchy.hpp"
#include "core/finding.hpp"
#include "core/series.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

// Footprints (bytes) where one level serves a streaming kernel alone.
struct LevelWindow {
  std::string level;  // "L1", "L2", ..., "dram"
  double low_bytes = 0;
  double high_bytes = 0;  // infinity for dram
};

// Windows from the latency hierarchy. Level n serves footprints from past
// the previous level (4x its capacity where the level is large enough for
// that, else 1.25x: past the previous level's capacity, partial hits there
// lift the bandwidth for a few octaves) up to 0.8x its own capacity; DRAM
// from 16x the last capacity (4x when the sweep does not reach that far),
// because a large last-level cache keeps catching a fraction
// capacity/footprint of a stream's loads (5% above DRAM's rate at 8x on the H200).
std::vector<LevelWindow> windows_from_hierarchy(const Hierarchy& h, double max_footprint_bytes);

// Windows from the read curve alone: its flat runs (at least 3 points within
// +-8% of their median) in order; the last run is DRAM when it begins past
// 64 MiB, else a cache whose end the sweep did not reach.
std::vector<LevelWindow> windows_from_curve(const Series& read);

// The flat run inside `w`: from the window's largest footprint downwards
// while points stay within 8% of the run's median. Empty when the window
// holds no point.
struct Plateau {
  double gbps = 0, low = 0, high = 0;  // median of the run, and its min..max
  double first_x = 0, last_x = 0;
  int points = 0;
};
std::optional<Plateau> plateau_in(const Series& s, const LevelWindow& w);

// memory.L<n>.bandwidth_gbps (read), memory.dram.bandwidth_gbps, .write_gbps,
// .copy_gbps. `hierarchy`: the latency probe's, when its series is in the
// same results (nullptr: segment the read curve on its own and say so).
// Any of the series may be null.
//
// `layouts`: the probe's other access layouts, each measured at one large
// footprint in a few shapes (bandwidth.stream.<kind>, bandwidth.grid.<kind>;
// x = bytes per work-item per step, meta footprint_bytes, meta detail with
// each point's shape; <kind> = read, write or copy, the id's last part).
// DRAM's read, write and copy rates are the best of all layouts measured at
// footprints inside the DRAM window: the per-group cursor curve's plateau,
// or the best point (median of its samples) of a layout series whose
// footprint is in the window. The method says which layout and shape gave
// the value and what the others read. Cache levels use the cursor curves only.
std::vector<Finding> bandwidth_findings(const Series* read, const Series* write, const Series* copy,
                                        const Hierarchy* hierarchy, const std::string& hierarchy_series_id,
                                        const std::vector<const Series*>& layouts = {});

// From bandwidth.workgroups (x = work-groups, y = GB/s):
// memory.bandwidth.workgroup_period: the count after whose multiples the
// bandwidth drops (one more group than a multiple of the cores leaves all but
// one core idle while it runs the extra one), and
// memory.bandwidth.saturating_workgroups: the fewest groups measured that
// reach 90% of the best bandwidth.
std::vector<Finding> workgroup_findings(const Series& workgroups);

// local.latency_ns, local.bandwidth_gbps, local.capacity_bytes, local.on_chip
// from the local probe's series (any may be null).
std::vector<Finding> local_findings(const Series* latency, const Series* global_latency,
                                    const Series* bandwidth, const Series* global_bandwidth,
                                    const Series* capacity);

}  // namespace gpuscope::analysis
