// Findings of the application probes: the lattice Boltzmann mini-app (lbm)
// against the memory bandwidth the bandwidth probe measured in the same run,
// and the sustained load (sustain): clock ramp, sustained clock, throttling
// and clock drops between launches. Pure functions of the stored series;
// nothing when their series are absent.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <vector>

namespace gpuscope::analysis {

// An LBM mode whose effective bandwidth reaches this fraction of the
// measured DRAM rate is called bandwidth-bound: FluidX3D's kernels reach
// 60-90% of the bandwidth of GPUs whose arithmetic keeps up (its README's
// table), while one that falls behind on the arithmetic (FP16C's decoding on
// a weak GPU, any mode on a CPU) stays far below.
inline constexpr double kBandwidthBoundFraction = 0.5;

// app.lbm.<mode>.{mlups, effective_gbps, fraction_of_dram, bound,
// viscosity_rel_error, mass_rel_error}. `found` holds the findings made so
// far (the DRAM rates are read from it).
std::vector<Finding> lbm_findings(const Results& r, const std::vector<Finding>& found);

// The clock is "up" once a launch reaches this fraction of the load's peak
// (the peak of a 5-launch running median); throughput "dropped" (throttling)
// when the load's last fifth runs below (1 - this) of that peak; a launch
// after an idle gap below this fraction of one with no gap shows a clock
// that fell while the device idled (DVFS).
inline constexpr double kClockUpFraction = 0.95;
inline constexpr double kThrottleDropFraction = 0.05;
inline constexpr double kGapDropFraction = 0.9;

// sustain.ramp_ms, .sustained_clock_mhz, .sustained_fraction, .throttling,
// .drop_fraction, .throttle_onset_s, .dvfs.clock_drops_between_launches,
// .dvfs.drop_after_gap_ms.
std::vector<Finding> sustain_findings(const Results& r);

}  // namespace gpuscope::analysis
