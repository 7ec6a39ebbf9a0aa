// The shapes a TLB level's miss curve takes past its reach, and the fit
// that reads the reach and the penalty from the rise of a strided chase's
// translation time (read_tlb_curve, analysis/tlb.cpp).
//
// How the fraction of hops whose translation misses grows past the reach R,
// at footprint F = r R (one level of TLB, a random cycle over the slots):
// - kSharp: one slot per page, LRU, fully associative: every hop misses
//   once the cycle holds one page more than the entries (r > 1).
// - kRevisits: several slots per page (stride below the page) visited in
//   random order: each hop's page is as good as drawn at random, so an LRU
//   or randomly replaced TLB, fully or set associative, holds R / F of the
//   pages the hops land on: misses 1 - 1/r (half the hops at 2 R).
// - kFewRevisits: s slots per page (s = 2 .. 16) in random order through an
//   LRU TLB. A hop hits where fewer than E other pages came between it and
//   its page's last hop; that gap is the one before one of s points on a
//   circle (Beta(1, s - 1) of the cycle), and a window of a fraction x of it
//   touches 1 - (1 - x)^s of the pages, so the hops miss
//   (1 - 1/r)^(1 - 1/s): kSharp at s = 1, kRevisits as s grows. A drawn
//   GPU's 4 KiB stride over 16 KiB pages missed 0.40 of its hops at 1.4 R
//   (this shape: 0.39; 1 - 1/r: 0.29), which read its 246 ns penalty as 301.
// - kRandom: one slot per page, random replacement, fully associative: the
//   survival fixed point of miss_model (misses 0.58 at 1.5 R, 0.8 at 2 R).
// - kSetsLru, kSetsRandom: one slot per page, a w-way TLB whose sets
//   consecutive pages fill together (LRU, or random replacement).
// Reading the reach where the first rise shows, as segmentation does, puts
// it up to twice too far for all but the first (half the hops at 2 R); a
// fit of the rise's shape reads where misses begin.
#pragma once

#include "analysis/tlb.hpp"

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis {

enum class TlbShape { kSharp, kRevisits, kFewRevisits, kRandom, kSetsLru, kSetsRandom };

struct TlbShapeFit {
  TlbShape shape = TlbShape::kSharp;
  // The shape's own parameter where it has one (0: none): the ways of
  // kSetsLru and kSetsRandom, the loads per page s of kFewRevisits.
  double param = 0;
  double reach = 0, reach_low = 0, reach_high = 0;
  double penalty = 0, penalty_sigma = 0;
  double saturation = 0;  // the shape's miss fraction at the window's last point
  double chi2 = std::numeric_limits<double>::max();
  double bic = std::numeric_limits<double>::max();

  // Fitted parameters: reach and penalty, and the shape's own where it has one.
  int parameters() const { return param > 0 ? 3 : 2; }
  // The shape in words, with its parameter.
  std::string describe() const;
};

// Fits excess - base = P miss_fraction(F / R) over the curve's points
// [first, last] (weights 1 / sigma^2) for every shape, by a grid over log R
// (1/64 octave) with P solved in closed form (weighted least squares) at
// each R, and keeps the shape of lowest BIC (chi2 + parameters() x ln n).
// The reach interval is where chi2 stays within 4 of its minimum. Nothing
// is returned when no shape rises inside the window.
std::optional<TlbShapeFit> fit_tlb_shape(const TlbCurve& c, const std::vector<double>& sigma, double base,
                                         size_t first, size_t last);

}  // namespace gpuscope::analysis
