// The bandwidth reader's thresholds (bandwidth_findings, workgroup_findings
// and local_findings, src/analysis/bandwidth.cpp): docs/inference.md
// section 5 cites each by name.
#pragma once

#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::bandwidth {

// Levels' plateaus.
inline constexpr Threshold kFlatTolerance{
    "kFlatTolerance", 0.08, "relative, each way", "a point on a flat run (a level's plateau) vs past it",
    "argument: bandwidth samples spread a few percent; 8% keeps a level's points and parts a 1.2x step"};
inline constexpr Threshold kFlatRunPoints{
    "kFlatRunPoints", 3, "points", "a flat run that is a level (no latency curve to place it) vs a passing one",
    "argument: three points are a level"};
inline constexpr Threshold kWindowSkipFactor{
    "kWindowSkipFactor", 4, "x the level before's capacity",
    "where a level's window starts: clear of the level before's partial hits",
    "argument: a random-replacement level still hits 1/4 of its lines' worth at 4x its capacity"};
inline constexpr Threshold kWindowNearFactor{
    "kWindowNearFactor", 1.25, "x the level before's capacity",
    "where a window starts when 4x would leave it under half the level", "argument: a narrow level still gets a window"};
inline constexpr Threshold kWindowEndShare{
    "kWindowEndShare", 0.8, "x the level's capacity", "a footprint inside the level vs one already spilling",
    "argument: a fifth of room for the launch's other buffers and the level's own misses"};
inline constexpr Threshold kDramWindowFar{
    "kDramWindowFar", 16, "x the last cache's capacity",
    "where DRAM's window starts when the sweep reaches 32x the last cache", "argument: the last cache's hits under 1/16"};
inline constexpr Threshold kDramWindowNear{
    "kDramWindowNear", 4, "x the last cache's capacity", "where DRAM's window starts on a shorter sweep",
    "argument: the last cache's hits under 1/4"};
inline constexpr Threshold kPlateauBaseConfidence{
    "kPlateauBaseConfidence", 0.4, "confidence", "a plateau of one point",
    "argument: one point is a reading, not a level"};
inline constexpr Threshold kPlateauPerPoint{
    "kPlateauPerPoint", 0.15, "confidence a point", "more points on a plateau vs fewer (4 points reach 0.85)",
    "argument: four agreeing points make a level"};
inline constexpr Threshold kPlateauCleanSpread{
    "kPlateauCleanSpread", 0.02, "relative spread", "a plateau tight enough to lose nothing for its spread",
    "argument: launches of one shape agree within 2%"};
inline constexpr Threshold kCurveOnlyFactor{
    "kCurveOnlyFactor", 0.8, "x", "levels placed by the latency probe vs split from the read curve alone",
    "argument: a flat run of partial hits can pass for a level"};
inline constexpr Threshold kStillFallingRatio{
    "kStillFallingRatio", 1.03, "x the plateau's low", "a DRAM window the curve still falls across vs a flat one",
    "argument: 3%, past the ~0.3% spread of samples on the H200"};

// DRAM's best layout, and the clean-sample rule every bandwidth reading shares.
inline constexpr Threshold kCleanSpread{
    "kCleanSpread", 0.03, "relative spread of samples", "a clean point (3 or more samples within 3%) vs a scattered one",
    "argument: validated launches of one shape agree within a few percent"};
inline constexpr Threshold kLayoutCleanConfidence{
    "kLayoutCleanConfidence", 0.85, "confidence", "DRAM's best layout from a clean point",
    "argument: a median of validated launches; the best of several layouts may still miss a faster one"};
inline constexpr Threshold kLayoutScatteredConfidence{
    "kLayoutScatteredConfidence", 0.6, "confidence", "DRAM's best layout from a scattered point",
    "argument: likelier than not"};

// Work-groups.
inline constexpr Threshold kDropRatio{
    "kDropRatio", 0.9, "x the rate at one group fewer",
    "a drop (one more group than a multiple of the units costs a round) vs noise",
    "argument: from kP to kP + 1 groups the rate falls to k / (k + 1); 10% is past samples' spread"};
inline constexpr Threshold kDropModelShare{
    "kDropModelShare", 0.5, "x the model's fall", "a multiple confirmed (it falls half as far as k / (k + 1) says)",
    "argument: half the model's fall at every multiple"};
inline constexpr Threshold kPeriodSureMultiples{
    "kPeriodSureMultiples", 3, "confirmed multiples", "a period confirmed three times (0.9) vs twice (0.7)",
    "argument: two multiples can agree by chance"};
inline constexpr Threshold kSaturatingShare{
    "kSaturatingShare", 0.9, "x the best rate", "work-groups that saturate the bandwidth",
    "argument: within the spread of the best points"};

// Local memory.
inline constexpr Threshold kCleanConfidence{
    "kCleanConfidence", 0.9, "confidence", "a local latency or bandwidth from clean samples",
    "argument: one direct measurement, validated"};
inline constexpr Threshold kScatteredConfidence{
    "kScatteredConfidence", 0.6, "confidence", "the same from scattered samples", "argument: likelier than not"};
inline constexpr Threshold kAllocationWorks{
    "kAllocationWorks", 0.5, "the capacity series' y (1: launched and held, 0: failed)",
    "an allocation that worked vs one that failed", "argument: the series records 1 or 0"};
inline constexpr Threshold kCapacityStepBytes{
    "kCapacityStepBytes", 1024, "B", "a capacity bracketed to the search's step (0.95) vs a coarser one (0.8)",
    "argument: the search stops at 1 KiB"};
inline constexpr Threshold kFasterLatency{
    "kFasterLatency", 0.85, "x the global path's latency", "local memory on chip (faster) vs behind the same cache",
    "argument: 15% past the tolerance a latency is read to"};
inline constexpr Threshold kSameLatency{
    "kSameLatency", 1.15, "x the global path's latency",
    "local memory that is the global path (within 15%) whatever its bandwidth",
    "Mali Bifrost: local float4 reads at 32 B/clk against 16 for buffers, through the same load/store cache"};
inline constexpr Threshold kFasterBandwidth{
    "kFasterBandwidth", 1.2, "x the global path's bandwidth", "local memory faster in bandwidth",
    "argument: 20% past bandwidth samples' spread"};
inline constexpr Threshold kOnChipPerLogMargin{
    "kOnChipPerLogMargin", 1.5, "confidence per unit of ln ratio",
    "how surely on chip: 0.5 plus 1.5 x the larger log ratio, within [0.5, 0.95]",
    "argument: a 2x margin reads 0.95"};

inline constexpr std::array kTable{
    &kFlatTolerance,          &kFlatRunPoints,         &kWindowSkipFactor,      &kWindowNearFactor,
    &kWindowEndShare,         &kDramWindowFar,         &kDramWindowNear,        &kPlateauBaseConfidence,
    &kPlateauPerPoint,        &kPlateauCleanSpread,    &kCurveOnlyFactor,       &kStillFallingRatio,
    &kCleanSpread,            &kLayoutCleanConfidence, &kLayoutScatteredConfidence, &kDropRatio,
    &kDropModelShare,         &kPeriodSureMultiples,   &kSaturatingShare,       &kCleanConfidence,
    &kScatteredConfidence,    &kAllocationWorks,       &kCapacityStepBytes,     &kFasterLatency,
    &kSameLatency,            &kFasterBandwidth,       &kOnChipPerLogMargin,
};

}  // namespace gpuscope::analysis::bandwidth
