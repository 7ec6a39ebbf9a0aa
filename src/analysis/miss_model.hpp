// Where a cache level's capacity lies within the rise of a latency curve.
//
// Between two plateaus (latencies L_a < L_b) a chase's latency is
// h L_a + (1 - h) L_b, with h the fraction of loads that still hit the
// nearer level. How h falls with the footprint F depends on the cache:
// - LRU-like, fully associative: h drops from 1 to 0 at F = C (a cliff).
// - Set overflow: a physically indexed cache under randomly placed pages
//   fills its sets unevenly, so some miss before F = C and some hold on
//   after; h falls symmetrically in log F around C, half the loads hitting
//   at F = C (CPU L2s, GPU L2s).
// - Random replacement: a victim is drawn at random, so lines survive past
//   F = C; under a cyclic chase h solves h = exp(-(1 - h) F / C) for F > C:
//   0.82 at 1.1 C, 0.42 at 1.5 C, 0.20 at 2 C (mobile GPUs, some CPUs).
// - Sets filling together: an LRU cache of w ways indexed by consecutive
//   line addresses (an L1 whose sets span no more than a page, or any cache
//   of contiguous memory) holds every line up to F = C; past it each extra
//   line overflows one more set, whose w + 1 lines then all miss under a
//   cyclic chase: h = 1 - (w + 1)(F - C)/F, reaching 0 at F = C (w + 1)/w.
//   Misses begin exactly at C; half the loads hit 1/(2w + 1) later (12% for
//   4 ways, 6% for 8: found by the sim backend's recovery tests).
// - Sets filling together under random replacement: the same even filling,
//   but an overflowing set of n > w lines, visited in a fixed cyclic order
//   (a single random cycle restricted to one set is still a cycle), keeps
//   some of them: 1/3 of the loads hit for 3 lines in 2 ways, 14% for 4.
//   Misses begin at C and fade out over about an octave; a 2-way cache's
//   half-hit point is 1.33 C (the sim's recovery tests again).
// - Line revisits: a cycle whose slots share lines (the texture probe's 2D
//   path makes every pixel a slot, several to a line) revisits a line after
//   a random gap. With k slots per line, the gap is roughly exponential with
//   mean F/k slots, and the lines touched in it, (F/k)(1 - e^(-k g / F)) in
//   line units, fit an LRU cache of C while g is short enough: h = C / F
//   for F > C, whatever k >= 2. Half the loads hit at 2C.
// - Line revisits under random replacement: a chase whose slots are half a
//   line of a randomly replaced level (64-byte slots, the first level's
//   line, in the 128-byte lines of an L2) visits each line twice per cycle,
//   at random places, so the gaps between a line's visits are a uniform
//   split of the cycle rather than the whole cycle: with b = 2 (1 - h) F / C,
//   h = (1 - e^-b) / b, 0.60 at 1.41 C, 0.36 at 2 C, 0.15 at 4 C (a
//   simulation of the cache agrees to 0.01).
// Reading "half the loads hit" as the capacity is right for the first two,
// 39% high for the third, up to 1/(2w+1) high for the fourth, a third
// high for a 2-way sixth, and 59% high for the eighth, so the rise's shape
// decides which to use.
#pragma once

#include <span>
#include <string>

namespace gpuscope::analysis {

enum class MissModel {
  kSharp,
  kSetOverflow,
  kRandomReplacement,
  kSetsFilling,
  kSetsFillingRandom,
  kLineRevisits,
  kLineRevisitsRandom,
};

std::string to_string(MissModel m);

struct CapacityFit {
  double capacity_bytes = 0;
  MissModel model = MissModel::kSharp;
  double width_octaves = 0;  // kSetOverflow: spread of the rise (logistic scale)
  double ways = 0;           // kSetsFilling(Random): associativity the rise's shape implies
};

// Fraction of loads that hit a fully associative random-replacement cache
// of capacity C under a cyclic chase of F = ratio * C.
double random_replacement_hit_rate(double ratio);

// Fraction of loads that hit a fully associative random-replacement cache
// of capacity C under a cyclic chase of F = ratio * C whose slots are half
// a line each (two visits per line and cycle, at random places).
double random_line_revisit_hit_rate(double ratio);

// Fraction of loads that hit a w-way LRU cache of capacity C whose sets fill
// together (consecutive lines), under a cyclic chase of F = ratio * C.
double sets_filling_hit_rate(double ratio, double ways);

// Fraction of loads that hit one set of `ways` lines under random
// replacement when a chase visits n of its lines in a fixed cyclic order.
// 1 for n <= ways; non-increasing in n. Tabulated once per associativity
// (up to 16 ways, n up to 6 ways) by a seeded simulation of the set, good
// to about 0.003; beyond the table and for wider sets, the mean-field root
// of h = (1 - 1/w)^((n - 1)(1 - h)), which runs up to 0.003 high there
// (0.06 high just past 16 ways).
double random_set_hit_rate(int n, int ways);

// Fraction of loads that hit a w-way random-replacement cache of capacity C
// whose sets fill together, under a cyclic chase of F = ratio * C: each set
// holds floor(m) or floor(m) + 1 of the m = w F / C lines per set, and a
// set is visited as often as it has lines.
double sets_filling_random_hit_rate(double ratio, double ways);

// Fits the rise given as footprints (ascending) and hit fractions h (1 on
// the plateau, 0 at the next level). With fewer than two points inside the
// rise (0.05 < h < 0.95) the shape cannot be told and the capacity is where
// h crosses 1/2 (kSharp); otherwise every model is fitted and the one with
// the lowest BIC wins (random replacement, with or without line revisits,
// has one parameter, set overflow and the two sets-filling models two):
// random replacement and sets filling (LRU or random) give their fitted
// capacity (where misses begin), set overflow the footprint where the data
// cross h = 1/2. The hit fractions are first made non-increasing (isotonic
// regression), as no real cache hits more often when the footprint grows.
//
// `slots_share_lines`: the chase's slots are smaller than a line (several
// per line, visited in random order): the line-revisit model is a candidate
// too (one parameter, read where misses begin), and wins where its BIC is
// the lowest.
//
// `far_footprint`: where the next level's latency, which h is relative to,
// was read (0: unknown, taken as where nothing hits any more). The
// sets-filling random model, which still hits a fraction t there, is
// compared as (h_model - t) / (1 - t), as the analysis sees it: its long
// tail lowers the start of the next plateau (2 ways still hit 14% of the
// loads at twice the capacity).
//
// `slots_may_pair`: the chase's slots may be half the level's line (a level
// beyond the first, chased at a stride under the longest line caches have):
// random replacement with two slots to a line is a candidate too (one
// parameter, read where misses begin) where at least 6 points lie in the
// rise and it fits them within 0.05 rms.
CapacityFit fit_capacity(std::span<const double> footprint, std::span<const double> hit,
                         bool slots_share_lines = false, double far_footprint = 0, bool slots_may_pair = false);

}  // namespace gpuscope::analysis
