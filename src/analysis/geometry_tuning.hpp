// The cache geometry reader's thresholds (src/analysis/cache_geometry.cpp):
// docs/inference.md section 7 cites each by name.
#pragma once

#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::geometry {

// Fill units from the pairs curves.
inline constexpr Threshold kPairsMinRise{
    "kPairsMinRise", 1.2, "x the hit latency",
    "a pairs curve whose partner starts to miss (a fill unit) vs one flat within noise",
    "argument: a miss costs the next level's latency, 1.3x or more on every device measured"};
inline constexpr Threshold kPairsStepShare{
    "kPairsStepShare", 0.25, "x the rise",
    "a point past the fill unit's step (in the step's upper or lower quarter) vs on it",
    "argument: a quarter of the rise clears the curve's noise at either end"};
inline constexpr Threshold kExclusiveBump{
    "kExclusiveBump", 1.15, "x the last point",
    "a second level exclusive of the first (the partner misses both: a bump) vs an inclusive one",
    "argument: the bump is a miss to the third level, 1.3x or more; 1.15 leaves room for noise"};
inline constexpr Threshold kFetchCleanSpread{
    "kFetchCleanSpread", 0.05, "relative spread",
    "a clean pairs curve (every point's spread under 5%) vs a scattered one",
    "argument: the 5% tolerance a latency is read to"};
inline constexpr Threshold kFetchCleanConfidence{
    "kFetchCleanConfidence", 0.75, "confidence", "a fill unit from a clean curve vs a scattered one (0.5)",
    "argument: the step is read from one curve; never surer than 0.75"};
inline constexpr Threshold kFetchScatteredConfidence{
    "kFetchScatteredConfidence", 0.5, "confidence", "a fill unit from a scattered curve",
    "argument: even odds"};

// The line from capacities by stride.
inline constexpr Threshold kLeftLevelRatio{
    "kLeftLevelRatio", 1.5, "x the hit latency",
    "a line curve that has left the first level (and where the next plateau starts) vs one still on it",
    "argument: the next level is 1.5x or more above the first on every device measured"};
inline constexpr Threshold kPlateauNeighbourRatio{
    "kPlateauNeighbourRatio", 1.05, "x",
    "the next plateau begun (a point whose successor is within 5%) vs a rise still climbing",
    "argument: the 5% tolerance a latency is read to"};
inline constexpr Threshold kPlateauPointsRatio{
    "kPlateauPointsRatio", 1.1, "x the plateau's first point", "points on the next plateau vs past it",
    "argument: twice the neighbour tolerance"};
inline constexpr Threshold kLineMinStrides{
    "kLineMinStrides", 2, "strides", "a line read from capacities vs a single stride's", "argument: a doubling needs two"};
inline constexpr Threshold kLineClearMisfit{
    "kLineClearMisfit", 0.02, "mean squared log misfit a stride",
    "a clear fit (capacities within about 14% rms of C max(1, S / L)) vs a rough one",
    "argument: 14% is under half the 2x that separates two lines"};
inline constexpr Threshold kLineRunnerUpFactor{
    "kLineRunnerUpFactor", 3, "x the best line's misfit", "one line clearly best vs two close readings",
    "argument: the next best line three times as far off"};
inline constexpr Threshold kLineClearStrides{
    "kLineClearStrides", 4, "strides", "a clear fit over enough strides to see the doubling start",
    "argument: two below the line and two past it"};
inline constexpr Threshold kLineClearConfidence{
    "kLineClearConfidence", 0.7, "confidence", "a line from a clear fit over kLineClearStrides strides or more",
    "argument: a CPU's adjacent-line prefetcher can double the reading; never surer than 0.7"};
inline constexpr Threshold kLineRoughConfidence{
    "kLineRoughConfidence", 0.5, "confidence", "a line from a rough fit or few strides", "argument: even odds"};
inline constexpr Threshold kLineBoundConfidence{
    "kLineBoundConfidence", 0.4, "confidence", "a line known only as a bound (doubling from the first or last stride)",
    "argument: a bound, under even odds"};

// Sharing.
inline constexpr Threshold kNextLevelDefault{
    "kNextLevelDefault", 2, "x the level's latency", "the next level's latency where the staircase has none",
    "argument: the least step between GPU cache levels seen, about 2x"};
inline constexpr Threshold kConcurrentRatio{
    "kConcurrentRatio", 1.5, "x the lone chase's first point",
    "work-groups that ran at once vs one after another (every hop G times slower where regions fit the L1)",
    "argument: a CPU driver running groups in turn made the first point G x slower; 1.5x allows contention"};
inline constexpr Threshold kSharingLowConfidence{
    "kSharingLowConfidence", 0.3, "confidence", "the least a sharing reading is held at", "argument: a bound of the gap's scale"};
inline constexpr Threshold kSharingHighConfidence{
    "kSharingHighConfidence", 0.8, "confidence", "the most a sharing reading is held at",
    "argument: one comparison of two chases"};
inline constexpr Threshold kPastNextLevel{
    "kPastNextLevel", 1.25, "x the next level's latency",
    "crowding one cache (slows groups to the next level at most) vs something else shared (a TLB)",
    "argument: a quarter above the next level is past its noise"};
inline constexpr Threshold kPastNextLevelCap{
    "kPastNextLevelCap", 0.6, "confidence", "a shared reading that translation may explain instead",
    "argument: likelier than not, not sure"};

inline constexpr std::array kTable{
    &kPairsMinRise,          &kPairsStepShare,        &kExclusiveBump,         &kFetchCleanSpread,
    &kFetchCleanConfidence,  &kFetchScatteredConfidence, &kLeftLevelRatio,    &kPlateauNeighbourRatio,
    &kPlateauPointsRatio,    &kLineMinStrides,        &kLineClearMisfit,       &kLineRunnerUpFactor,
    &kLineClearStrides,      &kLineClearConfidence,   &kLineRoughConfidence,   &kLineBoundConfidence,
    &kNextLevelDefault,      &kConcurrentRatio,       &kSharingLowConfidence,  &kSharingHighConfidence,
    &kPastNextLevel,         &kPastNextLevelCap,
};

}  // namespace gpuscope::analysis::geometry
