// The coalescing reader's thresholds (src/analysis/coalescing.cpp):
// docs/inference.md section 8 cites each by name. A saturating work-group
// size is held to bandwidth::kSaturatingShare, as the bandwidth probe's is.
#pragma once

#include "analysis/bandwidth_tuning.hpp"
#include "analysis/tuning.hpp"

#include <array>

namespace gpuscope::analysis::coalescing {

inline constexpr Threshold kSameWithin{
    "kSameWithin", 0.05, "relative", "an offset running like the aligned copy vs one paying for its split",
    "argument: the 5% tolerance a rate is read to"};
inline constexpr Threshold kSteepFall{
    "kSteepFall", 0.7, "x per doubling of the stride",
    "a fall that is the bytes' doing (the segment not yet whole) vs the loads in flight",
    "argument: a doubling inside the segment halves the useful bytes; 0.7 leaves room for caching"};
inline constexpr Threshold kFlatWithin{
    "kFlatWithin", 0.05, "relative",
    "a tail that runs flat (each octave within this of the tail's median) vs one still falling",
    "argument: the 5% tolerance a rate is read to, or 3x the points' median spread where wider"};
inline constexpr Threshold kFlatSpreadFactor{
    "kFlatSpreadFactor", 3, "x the points' median spread", "the flat tail's tolerance where the points are noisy",
    "argument: 3 σ"};
inline constexpr Threshold kRatioTightSpread{
    "kRatioTightSpread", 0.02, "combined relative spread", "a ratio of two tight points (0.85)",
    "argument: under half the 5% tolerance"};
inline constexpr Threshold kRatioLooseSpread{
    "kRatioLooseSpread", 0.05, "combined relative spread", "a ratio of looser points (0.7) vs scattered ones (0.5)",
    "argument: the 5% tolerance a rate is read to"};
inline constexpr Threshold kMisalignedPoints{
    "kMisalignedPoints", 8, "offsets", "a misaligned ratio from enough offsets to be judged by its points' spread",
    "argument: a quarter of the 32 offsets swept"};
inline constexpr Threshold kStrideRatioBand{
    "kStrideRatioBand", 0.05, "relative, each way",
    "a stride ratio's interval: wider than the samples' spread, since the source lands on other pages each run",
    "README, \"Bandwidth and local memory\": the wide strides' ratios move between runs more than within one"};
inline constexpr Threshold kClearFall{
    "kClearFall", 0.6, "x per doubling", "a segment read from a fall this steep (0.7) vs a gentler one (0.5)",
    "argument: past kSteepFall by a margin"};
inline constexpr Threshold kWorkgroupPoints{
    "kWorkgroupPoints", 6, "sizes", "a saturating size read from enough sizes (0.7) vs few (0.4)",
    "argument: sizes are powers of two: six span 1 to 32"};

inline constexpr std::array kTable{
    &kSameWithin,       &kSteepFall,       &kFlatWithin, &kFlatSpreadFactor, &kRatioTightSpread, &kRatioLooseSpread,
    &kMisalignedPoints, &kStrideRatioBand, &kClearFall,  &kWorkgroupPoints,
};

}  // namespace gpuscope::analysis::coalescing
