// The execution reader's thresholds (src/analysis/execution.cpp: wave
// width, scheduler partitions, resident waves, occupancy, code size and the
// instruction cache): docs/inference.md section 9 cites each by name.
#pragma once

#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::execution {

// Wave width.
inline constexpr Threshold kDivergenceStep{
    "kDivergenceStep", 1.35, "x (larger blocks' rate over smaller ones')",
    "a divergence penalty (a wave holding both sides pays for both: about 2x) vs none",
    "argument: well past noise, under the 2x of two sides issued one after the other"};
inline constexpr Threshold kStepOffTwo{
    "kStepOffTwo", 0.3, "abs(log2 step - 1)", "a step near the 2x of two sides issued vs another cause",
    "argument: 1.6x to 2.5x"};
inline constexpr Threshold kMinNoiseFloor{
    "kMinNoiseFloor", 0.01, "relative", "the least spread a point's rate is read to",
    "argument: even perfectly repeatable launches do not pin a rate closer than 1%"};

// Scheduler partitions.
inline constexpr Threshold kTiedFitError{
    "kTiedFitError", 0.02, "mean abs(ln ratio)", "partition counts the strides cannot tell apart vs a clear best",
    "argument: 2%, under the launches' spread"};
inline constexpr Threshold kGoodFitError{
    "kGoodFitError", 0.1, "mean abs(ln ratio)", "a partition model that explains the strides (0.8) vs a fair one",
    "argument: within 10% a point"};
inline constexpr Threshold kFairFitError{
    "kFairFitError", 0.2, "mean abs(ln ratio)", "a fair fit (0.5) vs a poor one (0.3)", "argument: within 20% a point"};

// Resident waves.
inline constexpr Threshold kSecondRoundJump{
    "kSecondRoundJump", 1.5, "x the first launch's time",
    "work-groups waiting for a second round (capacity reached) vs all resident",
    "argument: a second round doubles a latency-bound launch; 1.5x is past noise"};
inline constexpr Threshold kGradualRise{
    "kGradualRise", 1.25, "x the first launch's time",
    "a rise before the jump (no clean capacity) vs a flat run to it",
    "argument: a quarter above the first launch, under the jump"};
inline constexpr Threshold kTightBracket{
    "kTightBracket", 1.1, "x the last size that fit (plus a wave)",
    "a capacity bracketed within a wave and 10% (0.85) vs a looser one (0.6)", "argument: the sweep's step"};

// Occupancy.
inline constexpr Threshold kMinOccupancyDrop{
    "kMinOccupancyDrop", 0.05, "relative", "an occupancy cliff vs noise",
    "argument: the least drop a wave fewer makes at 20 resident waves"};
inline constexpr Threshold kDropSigmas{
    "kDropSigmas", 3, "σ of the two points", "a drop the points' noise cannot explain", "argument: 3σ"};
inline constexpr Threshold kRoughRise{
    "kRoughRise", 1.08, "x the lowest point before",
    "a curve that climbs back (a CPU shared with other work: guesses only) vs one that only falls",
    "argument: occupancy only falls as resources grow; 8% past noise"};
inline constexpr Threshold kFullCurvePoints{
    "kFullCurvePoints", 6, "points", "an occupancy curve with enough points for a full confidence",
    "argument: cliffs at 32, 64, 128 registers need points between them"};
inline constexpr Threshold kFullOccupancyShare{
    "kFullOccupancyShare", 0.9, "x the first plateau", "a point still at full occupancy vs past a cliff",
    "argument: within the first plateau's spread"};
inline constexpr Threshold kRegisterFilePlateaus{
    "kRegisterFilePlateaus", 4, "plateaus", "a register file read from enough plateaus (0.6) vs fewer (0.4)",
    "argument: allocation granularity scatters each product; four agree"};

// Code size and the instruction cache.
inline constexpr Threshold kSlopeTightSpread{
    "kSlopeTightSpread", 0.1, "relative spread of the slopes", "code bytes per op read cleanly (0.9)",
    "argument: within 10%"};
inline constexpr Threshold kSlopeLooseSpread{
    "kSlopeLooseSpread", 0.3, "relative spread of the slopes", "code bytes per op read roughly (0.6) vs badly (0.3)",
    "argument: within 30%"};
inline constexpr Threshold kPeakShare{
    "kPeakShare", 0.95, "x the peak", "a loop body still at peak throughput (fits the instruction cache)",
    "argument: within the launches' spread"};
inline constexpr Threshold kStillFast{
    "kStillFast", 0.85, "x the peak", "a lasting drop (the sweep ends below it) vs a dip the curve recovers from",
    "argument: 85% of peak; a miss costs far more"};
inline constexpr Threshold kStaysSlow{
    "kStaysSlow", 0.8, "x the rate after the first drop",
    "a second drop (a second level of instruction caching) vs the first drop's level",
    "argument: 20% under the first drop's rate, past the launches' spread"};

inline constexpr std::array kTable{
    &kDivergenceStep,    &kStepOffTwo,       &kMinNoiseFloor,        &kTiedFitError,
    &kGoodFitError,      &kFairFitError,     &kSecondRoundJump,      &kGradualRise,
    &kTightBracket,      &kMinOccupancyDrop, &kDropSigmas,           &kRoughRise,
    &kFullCurvePoints,   &kFullOccupancyShare, &kRegisterFilePlateaus, &kSlopeTightSpread,
    &kSlopeLooseSpread,  &kPeakShare,        &kStillFast,            &kStaysSlow,
};

}  // namespace gpuscope::analysis::execution
