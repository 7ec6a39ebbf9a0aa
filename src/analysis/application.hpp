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

}  // namespace gpuscope::analysis
