// The load path's staircase reader's thresholds (infer_cache_hierarchy,
// src/analysis/cache_hierarchy.cpp and staircase.cpp): docs/inference.md
// section 3 cites each by name. HierarchyOptions holds the ones a caller
// may set (the step between levels, a plateau's least extent, DRAM's least
// footprint, the departure's sigmas); these are the reader's own.
#pragma once

#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::staircase {

// Preparing the curve.
inline constexpr Threshold kSpikeSigmas{
    "kSpikeSigmas", 4, "σ", "a disturbed point (an interrupt, a clock change) vs a feature of the staircase",
    "argument: no staircase feature is one point wide; a point off both neighbours by 4σ is not noise"};
inline constexpr Threshold kSpikeOverNeighbourGap{
    "kSpikeOverNeighbourGap", 2, "x", "a spike vs a point on a steep ramp (whose neighbours differ too)",
    "argument: on a ramp the point lies between its neighbours; twice their gap off both is off the ramp"};

// Levels.
inline constexpr Threshold kFlatSlopeShareOfStep{
    "kFlatSlopeShareOfStep", 0.5, "x ln(min_step_ratio) an octave",
    "a level that drifts (a shared L3, DRAM with TLB misses) vs a climb",
    "argument: a level drifting half the smallest step an octave would need two octaves to look like one"};
inline constexpr Threshold kRampShareOfContextSlope{
    "kRampShareOfContextSlope", 0.5, "x the slope an octave around",
    "a piece of a ramp (as steep as the curve around it) vs a level (far flatter than the rises beside it)",
    "tests/data/pocl_epyc, tests/data/pocl_emr: CPU L2s overflowing set by set curve over two octaves"};
inline constexpr Threshold kFallingSlopeSigmas{
    "kFallingSlopeSigmas", 2, "σ of the slope",
    "a stretch falling with footprint (launches sharing the machine) vs a level",
    "argument: latency never falls as a footprint grows; 2σ keeps a flat level's noise"};
inline constexpr Threshold kFinalRisePoints{
    "kFinalRisePoints", 2, "points", "a rise after the last plateau vs one disturbed point",
    "argument: one point alone could be a disturbance"};

// Capacities.
inline constexpr Threshold kDepartureShareOfStep{
    "kDepartureShareOfStep", 0.5, "x the step",
    "on the plateau vs left it, where the next level is nearer than departure_sigmas",
    "argument: half way to the next level is nearer it than the plateau"};
inline constexpr Threshold kNamedModelOctaves{
    "kNamedModelOctaves", 1, "octaves", "a rise gradual enough that the miss model reading it matters vs a sharp one",
    "argument: a sharp rise reads the same capacity under every model"};
inline constexpr Threshold kContendedMinStepRatio{
    "kContendedMinStepRatio", 1.3, "x",
    "samples split between two levels (a co-tenant took part of the level) vs noise",
    "argument: a disturbed launch is a few percent of a point's samples; it cannot reach the step's upper quarter "
    "when the next level is 1.3x away"};
inline constexpr Threshold kContendedHitShareOfStep{
    "kContendedHitShareOfStep", 0.25, "x the step", "a point still on the level (its fast tail hits) vs one past it",
    "argument: the point's latency is a low quantile, in the step's lower quarter"};
inline constexpr Threshold kContendedMissShareOfStep{
    "kContendedMissShareOfStep", 0.75, "x the step", "a launch that found the level taken vs one that hit it",
    "argument: a sample in the step's upper quarter missed the level"};
inline constexpr Threshold kContendedMinMissedSamples{
    "kContendedMinMissedSamples", 3, "samples", "a contended point vs a stray slow launch",
    "argument: fewer are a disturbance"};
inline constexpr Threshold kContendedMissedOneIn{
    "kContendedMissedOneIn", 5, "samples per missed sample",
    "a contended point (a fifth or more of its launches missed) vs a few disturbed launches",
    "argument: a rise gives every launch of one cycle the same hit fraction; a split needs a share"};
inline constexpr Threshold kContendedMinPoints{
    "kContendedMinPoints", 2, "points", "a level whose room changed during the run vs one contended point",
    "argument: two footprints below the capacity agreeing"};
inline constexpr Threshold kContendedCapacityCap{
    "kContendedCapacityCap", 0.45, "confidence",
    "the capacity the level held at its freest vs the hardware's (which may be larger)",
    "argument: under even odds that the hardware's capacity was seen"};

// The line-revisit refit (several slots to a line: the texture probe's 2D path).
inline constexpr Threshold kRevisitExtraPoints{
    "kRevisitExtraPoints", 2, "points beyond 2 a level",
    "a curve with enough points to fit every level's capacity and latency at once",
    "argument: 2(m + 1) unknowns, and two points to judge the fit"};
inline constexpr Threshold kRevisitSearchSpan{
    "kRevisitSearchSpan", 2, "x the staircase reading, each way",
    "where a level's capacity may lie once the C/F tail is accounted for",
    "argument: the staircase misreads a C/F rise by less than an octave"};
inline constexpr Threshold kRevisitCapacityGap{
    "kRevisitCapacityGap", 1.01, "x", "two levels kept apart in the search vs one",
    "argument: the search keeps the levels' order"};
inline constexpr Threshold kRevisitSearchSteps{
    "kRevisitSearchSteps", 200, "steps", "a capacity the search resolves vs one between its steps",
    "argument: 2 octaves in 200 steps, 0.7% apart, under the 3% kept"};
inline constexpr Threshold kRevisitSweeps{
    "kRevisitSweeps", 3, "sweeps", "a coordinate search settled vs still moving",
    "argument: the levels interact only through their neighbours"};
inline constexpr Threshold kRevisitKeepRms{
    "kRevisitKeepRms", 0.03, "relative rms",
    "a curve the line-revisit model explains vs a sampler that keeps a line's texels together (sharp rises)",
    "tests/data/h200: the H200's 2D path rises sharply and keeps its staircase"};

// Translation and DRAM.
inline constexpr Threshold kBeyondTranslationFactor{
    "kBeyondTranslationFactor", 1.5, "x what translation adds",
    "a cache running out past the TLB's reach (a 12 MiB L2 behind a 3 MiB TLB) vs translation misses",
    "argument: translation adds at most P (1 - R/F) a level; 1.5x leaves room for its noise"};
inline constexpr Threshold kReachEndOfOnset{
    "kReachEndOfOnset", 1.5, "x the reach",
    "a plateau running on across the TLB's reach (its end may be translation's) vs one begun past it",
    "argument: translation misses drift a plateau up from the reach on"};
inline constexpr Threshold kDramHintLow{
    "kDramHintLow", 0.9, "x the DRAM latency measured on another path",
    "a short sweep's last plateau at DRAM's latency vs a last cache",
    "argument: the texture path may add its sampler's time, never take any away; 10% for noise"};
inline constexpr Threshold kDramHintHigh{
    "kDramHintHigh", 1.3, "x the DRAM latency measured on another path",
    "DRAM through the texture path (plus the sampler's time) vs a slower level",
    "argument: a sampler adds under 30% to a DRAM load"};
inline constexpr Threshold kGradualRiseOctaves{
    "kGradualRiseOctaves", 2.5, "octaves",
    "a rise as gradual as translation misses (1 - R/F of the loads) vs a cache running out",
    "argument: caches run out within about 1.5 octaves, even under random replacement"};
inline constexpr Threshold kRivalReadingCap{
    "kRivalReadingCap", 0.75, "confidence",
    "a reading with a rival the curve cannot rule out (the level may be DRAM, the rise translation, the plateau "
    "no one latency) vs a clear one",
    "argument: the reading is likelier than its rival, not sure"};
inline constexpr Threshold kWalkShareOfLatency{
    "kWalkShareOfLatency", 0.02, "x the latency",
    "translation taken out of a reading large enough to matter vs negligible",
    "argument: under the 5% a latency is judged to"};
inline constexpr Threshold kTlbReadingShare{
    "kTlbReadingShare", 0.95, "x the tlb probe's confidence",
    "a reading that rests on the tlb probe's (walks taken out) vs its own",
    "argument: no surer than the reading it rests on, and a little less"};

// Confidence.
inline constexpr Threshold kPointsScale{
    "kPointsScale", 3, "points", "a plateau of few points (its level and extent unsure) vs many: pf = 1 - e^(-n / 3)",
    "argument: 3 points 0.63, 6 0.86, 9 0.95"};
inline constexpr Threshold kOpenEndCapacityFactor{
    "kOpenEndCapacityFactor", 0.2, "x pf", "a capacity known only to exceed the sweep's last footprint",
    "argument: a lower bound, not a reading"};
inline constexpr Threshold kOpenEndLatencyFactor{
    "kOpenEndLatencyFactor", 0.5, "x pf", "a last plateau that may yet be something else (DRAM, a TLB)",
    "argument: even odds"};
inline constexpr Threshold kFallingHeadRatio{
    "kFallingHeadRatio", 1.05, "x the plateau's median",
    "a plateau that falls across its footprints (no one latency) vs a level",
    "a drawn GPU's exclusive 156 ns L2 behind a random L1: 197 ns just past the L1, 161 ns at its capacity; 5% is "
    "the tolerance a latency is read to"};
inline constexpr Threshold kSplitMaxLatencyRatio{
    "kSplitMaxLatencyRatio", 2, "x the level before",
    "the far half of a split cache vs a cache of its own (which is 2x slower or more)",
    "tests/data/h100, tests/data/h200: the far L2 half about 1.5x the near one"};
inline constexpr Threshold kSplitMinCapacityRatio{
    "kSplitMinCapacityRatio", 1.5, "x the level before", "the far half (the whole cache) vs noise in one level",
    "tests/data/h100, tests/data/h200: the whole L2 about twice the near half"};
inline constexpr Threshold kSplitMaxCapacityRatio{
    "kSplitMaxCapacityRatio", 3, "x the level before", "the far half of a split vs a larger cache of its own",
    "tests/data/h100, tests/data/h200"};

inline constexpr std::array kTable{
    &kSpikeSigmas,          &kSpikeOverNeighbourGap,   &kFlatSlopeShareOfStep,    &kRampShareOfContextSlope,
    &kFallingSlopeSigmas,   &kFinalRisePoints,         &kDepartureShareOfStep,    &kNamedModelOctaves,
    &kContendedMinStepRatio, &kContendedHitShareOfStep, &kContendedMissShareOfStep, &kContendedMinMissedSamples,
    &kContendedMissedOneIn, &kContendedMinPoints,      &kContendedCapacityCap,    &kRevisitExtraPoints,
    &kRevisitSearchSpan,    &kRevisitCapacityGap,      &kRevisitSearchSteps,      &kRevisitSweeps,
    &kRevisitKeepRms,       &kBeyondTranslationFactor, &kReachEndOfOnset,         &kDramHintLow,
    &kDramHintHigh,         &kGradualRiseOctaves,      &kRivalReadingCap,         &kWalkShareOfLatency,
    &kTlbReadingShare,      &kPointsScale,             &kOpenEndCapacityFactor,   &kOpenEndLatencyFactor,
    &kFallingHeadRatio,     &kSplitMaxLatencyRatio,    &kSplitMinCapacityRatio,   &kSplitMaxCapacityRatio,
};

}  // namespace gpuscope::analysis::staircase
