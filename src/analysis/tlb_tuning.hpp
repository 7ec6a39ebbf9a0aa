// The TLB reader's thresholds (read_tlb_curve, src/analysis/tlb_curve.cpp;
// tlb_findings and hold_tlb_levels_to_chase, src/analysis/tlb.cpp):
// docs/inference.md section 4 cites each by name.
#pragma once

#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::tlb {

// The curves (read_tlb_curve, src/analysis/tlb_curve.cpp).
inline constexpr Threshold kMinRelativeRise{
    "kMinRelativeRise", 0.10, "x the control's latency",
    "a rise that can be a TLB level vs a drift of the caches",
    "argument: GPU TLB misses cost tens to hundreds of ns against 20-300 ns hits, CPU ones several ns against 1-5 ns"};
inline constexpr Threshold kControlJump{
    "kControlJump", 0.1, "|ln ratio| to a neighbour",
    "a control changing level (a cache overflowing, by set mapping) vs a steady baseline",
    "tests/data/h200: the L1's overflow made a 2 MiB-strided chase 20 ns slower than the control with no TLB cost"};
inline constexpr Threshold kNoiseFloorNs{
    "kNoiseFloorNs", 0.05, "ns", "a difference worth reading vs the timer's resolution",
    "argument: device timestamps resolve tens of ps per load over a long chase"};
inline constexpr Threshold kClearSigmas{
    "kClearSigmas", 2, "σ",
    "a point clearly off another (below the control, above a plateau) vs within noise",
    "argument: 2σ of the difference's combined noise"};
inline constexpr Threshold kOwnScatterShareOfFloor{
    "kOwnScatterShareOfFloor", 0.5, "x k_min_relative_noise",
    "a point's own scatter floor vs the noise floor that would hide a TLB step 3% off a cache level",
    "argument: the 1.5% floor of noise_ns would take a 3% step for noise"};
inline constexpr Threshold kPlateauSpread{
    "kPlateauSpread", 0.03, "x the latency",
    "control points forming one plateau vs a gradual rise passing through",
    "argument: a cache level's points agree within its noise, a few percent"};
inline constexpr Threshold kPlateauPoints{
    "kPlateauPoints", 3, "points", "a control plateau vs two points that agree by chance",
    "argument: three points are a level"};
inline constexpr Threshold kStepSigmas{
    "kStepSigmas", 3, "σ (the segment's median point noise)",
    "a step clear of noise (a new level, a fall ending a window) vs scatter",
    "argument: 3σ, and the segment's median noise so one disturbed point does not hide a step"};
inline constexpr Threshold kFallShareOfStep{
    "kFallShareOfStep", 0.1, "x the step",
    "a fall that takes a step back or ends a shape's window vs the level's scatter",
    "argument: a tenth of the step, beside kStepSigmas"};
inline constexpr Threshold kBracketShareOfStep{
    "kBracketShareOfStep", 0.5, "x the step",
    "a left-out point past the reach (its excess bounded from below over half the step) vs one before it",
    "a 384-entry TLB of 4 KiB pages: its 2 MiB point, 186 ns above any control level around 512 slots, closes the "
    "bracket"};
inline constexpr Threshold kShapeChi2PerDof{
    "kShapeChi2PerDof", 3, "chi2 per degree of freedom",
    "a rise one miss shape explains vs none (the segmentation's reading kept)",
    "argument: chi2 about 1 per degree of freedom for a fit within noise; 3 allows the noise's estimate"};
inline constexpr Threshold kWholeSaturation{
    "kWholeSaturation", 0.75, "share of hops missing",
    "a fitted height read where the window reaches it vs an extrapolation",
    "argument: beyond three quarters the fit's height is read, not extrapolated"};
inline constexpr Threshold kPenaltySigmas{
    "kPenaltySigmas", 2, "σ of the fitted penalty", "the penalty's interval",
    "argument: about 95% of a normal reading"};

// Which stride reads the reach.
inline constexpr Threshold kSameReadingFactor{
    "kSameReadingFactor", 1.3, "x",
    "two strides' readings (a reach, a step's height, a reach scaled by the strides' ratio) that are one reading vs "
    "two",
    "argument: TLB levels and pages are powers of two apart, so a reading 2x off is another"};
inline constexpr Threshold kScalingStrideRatio{
    "kScalingStrideRatio", 2, "x the earliest step's stride",
    "a larger stride that can show the earliest step scaled (both strides past the page) vs a neighbour",
    "argument: strides are powers of two; the next one up must put the step at least 2x later to scale it"};

// The first level's penalty.
inline constexpr Threshold kPenaltyOverChaseBound{
    "kPenaltyOverChaseBound", 1.15, "x the chase's bound",
    "a penalty the chase allows vs the strided lines missing caches the control's hit",
    "a drawn GPU's 4-way TLB of 64 KiB pages read 428 ns for 282 through its 2 MiB stride, whose lines overflowed a "
    "12 MiB L2"};
inline constexpr Threshold kStepSurePoints{
    "kStepSurePoints", 3, "points", "a step read from enough points on its new level vs from one or two",
    "argument: three points are a level, two may be a ramp"};
inline constexpr Threshold kStepSureConfidence{
    "kStepSureConfidence", 0.75, "confidence", "a reach or penalty from kStepSurePoints points or more",
    "argument: a TLB step can also be caches the strided lines crowd; never surer than 0.75"};
inline constexpr Threshold kStepFewPointsConfidence{
    "kStepFewPointsConfidence", 0.5, "confidence", "a reach or penalty from fewer points, or capped by the chase",
    "argument: even odds"};
inline constexpr Threshold kNoRiseConfidence{
    "kNoRiseConfidence", 0.4, "confidence", "a reach known only to exceed the sweep (no rise anywhere)",
    "argument: a lower bound, under even odds"};

// What a miss adds past the first cache level.
inline constexpr Threshold kControlPastFirstLevel{
    "kControlPastFirstLevel", 1.5, "x the control's first point",
    "slot counts where the control's loads miss its first cache level vs hit it",
    "argument: a step of 1.5x is past any first level's noise"};
inline constexpr Threshold kPastL1PenaltyFactor{
    "kPastL1PenaltyFactor", 1.3, "x the penalty on L1 hits",
    "a page walk (no dearer past the L1 than on it) vs the strided lines missing a cache the control hits",
    "bench/cuda_tlb.cu: an H100's lookup costs 80-130 cycles on an L1 hit and 10 on an L2 hit"};
inline constexpr Threshold kPastL1MinPoints{
    "kPastL1MinPoints", 2, "points", "a past-L1 penalty read vs one point's noise",
    "argument: two points agreeing"};
inline constexpr Threshold kPastL1SureConfidence{
    "kPastL1SureConfidence", 0.6, "confidence", "a past-L1 penalty from kStepSurePoints points or more",
    "argument: read where the control has left its level, so less sure than the step itself"};

// The page size.
inline constexpr Threshold kSamePageStepRatio{
    "kSamePageStepRatio", 1.6, "x",
    "two strides running out at the same footprint (both at most the page) vs the larger later (past the page)",
    "argument: under half way (in octaves) to the 2x a stride past the page would show"};
inline constexpr Threshold kPageLowerBoundConfidence{
    "kPageLowerBoundConfidence", 0.6, "confidence", "pages at least the larger stride (a lower bound)",
    "argument: a bound from two steps agreeing"};
inline constexpr Threshold kPageFromRatioConfidence{
    "kPageFromRatioConfidence", 0.5, "confidence", "pages read from a step ratio, rounded to a power of two",
    "argument: even odds; the ratio is read from two noisy steps"};

// TLB levels beyond the first, held to the chase.
inline constexpr Threshold kOwnShareOfLatency{
    "kOwnShareOfLatency", 0.1, "x the chase's latency at the level's reach",
    "a level the chase could show (it adds a tenth or more) vs one too small to judge",
    "argument: under a tenth, the chase's noise and its caches hide it"};
inline constexpr Threshold kSeenShareOfExpected{
    "kSeenShareOfExpected", 0.5, "x what the levels would add",
    "a level the chase shows (translation) vs the strided lines' caches",
    "argument: caches running out only add to the chase's rise; under half of the expected is not translation"};
inline constexpr Threshold kUnseenLevelCap{
    "kUnseenLevelCap", 0.3, "confidence", "a TLB level the chase does not show",
    "argument: below the 0.5 the staircases take levels from"};

inline constexpr std::array kTable{
    &kMinRelativeRise,        &kControlJump,              &kNoiseFloorNs,            &kClearSigmas,
    &kOwnScatterShareOfFloor, &kPlateauSpread,            &kPlateauPoints,           &kStepSigmas,
    &kFallShareOfStep,        &kBracketShareOfStep,       &kShapeChi2PerDof,         &kWholeSaturation,
    &kPenaltySigmas,
    &kSameReadingFactor,      &kScalingStrideRatio,       &kPenaltyOverChaseBound,   &kStepSurePoints,
    &kStepSureConfidence,     &kStepFewPointsConfidence,  &kNoRiseConfidence,        &kControlPastFirstLevel,
    &kPastL1PenaltyFactor,    &kPastL1MinPoints,          &kPastL1SureConfidence,    &kSamePageStepRatio,
    &kPageLowerBoundConfidence, &kPageFromRatioConfidence, &kOwnShareOfLatency,       &kSeenShareOfExpected,
    &kUnseenLevelCap,
};

}  // namespace gpuscope::analysis::tlb
