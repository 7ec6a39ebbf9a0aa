// Confidence factors more than one reader applies, each 0..1 and multiplied
// into a finding's confidence.
#pragma once

namespace gpuscope::analysis {

// A finding sure enough for another reader to build on (a reach the
// staircases cut at, a clock cycles are counted in, a wave width waves are
// counted in, a capacity a box is sized to): at even odds or better.
inline constexpr double kPassOnConfidence = 0.5;

// A step is as likely noise as not at this many noise sigmas (factor 0.5).
inline constexpr double kEvenOddsSigmas = 3;

// How surely a step of z noise sigmas is a step: 3 sigma 0.5, 6 sigma 0.8,
// 10 sigma 0.92.
inline double separation_factor(double z) { return z * z / (z * z + kEvenOddsSigmas * kEvenOddsSigmas); }

}  // namespace gpuscope::analysis
