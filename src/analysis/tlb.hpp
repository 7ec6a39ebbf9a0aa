// TLB reach and miss penalty from the tlb probe's page-strided chases.
//
// tlb.stride_<S> (x = footprint bytes, one slot per S-byte block) minus
// tlb.control (x = slots, as many slots one line apart) leaves the time per
// hop that translation adds: about zero while every page's translation is
// cached, one step up each time a level of TLB runs out of entries. The
// footprint where a step starts is that level's reach (entries x page size,
// for S <= the page size), its height the extra latency of a miss there.
#pragma once

#include "core/finding.hpp"
#include "core/series.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

struct TlbStep {
  double reach_bytes = 0;                // the one power of two in [reach_low, reach_high), else their geometric middle
  double reach_low = 0, reach_high = 0;  // last footprint before the rise, first one on the new level
  double penalty_ns = 0;                 // rise of the translation time over the level below
  double penalty_low = 0, penalty_high = 0;
  int points = 0;  // points on the new level
  std::string shape;  // the miss curve's shape that read the reach (empty: none fitted)
  // The penalty is the whole cost of a miss: a sharp step of two or more
  // points, or a fitted shape whose window reaches three quarters of every
  // hop missing. False where it is the rise seen short of that, or no shape
  // fitted.
  bool penalty_whole = false;
  bool one_load_per_page = false;  // the fitted shape has one slot per page (sharp, random, sets)
  bool sharp = false;              // the fitted shape is one sharp step (TlbShape::kSharp)
};

struct TlbCurve {
  double stride_bytes = 0;
  std::vector<double> footprint;  // points where the control could be matched
  std::vector<double> excess_ns;  // y - control_ns
  // The control at the same slot count, or the cache level the strided
  // lines already stand on where that is higher.
  std::vector<double> control_ns;
  double base_ns = 0;             // translation time on the first level (about 0)
  std::vector<TlbStep> steps;     // in footprint order
};

// One strided series against the control. Never throws; a curve without a
// clear rise has no steps.
TlbCurve read_tlb_curve(const Series& strided, const Series& control);

// memory.tlb.reach_bytes and memory.tlb.miss_penalty_ns (the first level to
// run out), memory.tlb.L<n>.reach_bytes / .miss_penalty_ns for each level
// beyond, memory.tlb.page_bytes (what two strides' steps say of the page
// size), from the series whose first step comes earliest, and
// memory.tlb.miss_penalty_past_l1_ns (what a first-level miss adds to loads
// whose data misses the first cache level too, where the control shows it).
// `chase`, where given, is the latency probe's chase (latency.global); it
// bounds the first level's penalty (chase_penalty_bound) and a reading
// above it is not taken.
std::vector<Finding> tlb_findings(const Series& control, const std::vector<const Series*>& strided,
                                  const Series* chase = nullptr);

// What the latency probe's chase (x = footprint bytes, y = ns a load; one
// load per line over every page of the footprint) allows the first TLB
// level's miss penalty to be, given its reach (read at `reach`, at most
// `reach_high`): past a reach R such a chase misses on about 1 - R/F of its
// loads, and caches running out or further TLB levels only add to its rise.
// So the penalty is at most (y1 - y0) / (1 - R/F), with F the chase's
// largest footprint, R = reach_high, y1 its highest latency over [F/2, F]
// and y0 its lowest over [reach / 4, reach]: each errs towards a larger
// bound where the reach is read late, a cache runs out before it or the
// curve wavers at its end. Unset where F < 2R (under half the loads miss)
// or the chase has no point in [reach / 4, reach].
std::optional<double> chase_penalty_bound(const Series& chase, double reach, double reach_high);

// Holds the TLB levels beyond the first against the latency probe's chase
// (`latency`: x = footprint bytes, y = ns a load), which misses a level of
// reach R on about 1 - R/F of its loads. Past such a level's reach the
// chase must rise by at least what the levels' penalties add between there
// and its largest footprint (caches running out only add to that); a level
// the chase shows less than half of is the strided lines' caches, not
// translation: its findings drop below confidence 0.5 with a note saying
// so, and the staircases do not take it out. Returns how many it dropped.
int hold_tlb_levels_to_chase(std::vector<Finding>& tlb, const Series& latency);

}  // namespace gpuscope::analysis
