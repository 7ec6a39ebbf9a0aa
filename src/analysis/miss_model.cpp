#include "analysis/miss_model.hpp"

#include "core/random.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gpuscope::analysis {

std::string to_string(MissModel m) {
  switch (m) {
    case MissModel::kSetOverflow:
      return "set overflow";
    case MissModel::kRandomReplacement:
      return "random replacement";
    case MissModel::kSetsFilling:
      return "sets filling together";
    case MissModel::kSetsFillingRandom:
      return "sets filling together, random replacement";
    case MissModel::kLineRevisits:
      return "line revisits";
    case MissModel::kLineRevisitsRandom:
      return "line revisits, random replacement";
    default:
      return "sharp";
  }
}

namespace {

// The root in (0, 1) of g(h) = h - exp(-(1 - h) d), d > 1: a line survives
// the misses between two of its visits with probability exp(-d (1 - h)).
// g < 0 at 0 and, since g'(1) = 1 - d < 0, g > 0 just below the trivial
// root h = 1.
double survival_fixed_point(double d) {
  double lo = 0, hi = 1 - 1e-12;
  for (int i = 0; i < 60; ++i) {
    const double h = 0.5 * (lo + hi);
    (h - std::exp(-(1 - h) * d) < 0 ? lo : hi) = h;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double random_replacement_hit_rate(double ratio) { return ratio <= 1 ? 1.0 : survival_fixed_point(ratio); }

double random_line_revisit_hit_rate(double ratio) {
  if (ratio <= 1) return 1.0;
  // A line's two visits split the cycle's 2F/L loads at a uniform point, so
  // the misses in the gap before a visit are (1 - h) 2 (F/L) U, U uniform on
  // (0, 1), each evicting the line with probability L/C: the line survives
  // with probability E[exp(-b U)] = (1 - e^-b) / b, b = 2 (1 - h) F / C.
  // g(h) = h - (1 - e^-b) / b is negative at 0 and, since
  // g'(1) = 1 - ratio < 0, positive just below the trivial root h = 1.
  const auto survival = [&](double h) {
    const double b = 2 * (1 - h) * ratio;
    return b < 1e-12 ? 1.0 : -std::expm1(-b) / b;
  };
  double lo = 0, hi = 1 - 1e-12;
  for (int i = 0; i < 60; ++i) {
    const double h = 0.5 * (lo + hi);
    (h - survival(h) < 0 ? lo : hi) = h;
  }
  return 0.5 * (lo + hi);
}

double sets_filling_hit_rate(double ratio, double ways) {
  if (ratio <= 1) return 1.0;
  return std::max(0.0, 1 - (ways + 1) * (ratio - 1) / ratio);
}

namespace {

constexpr int kMaxTabulatedWays = 16;
constexpr int kTabulatedLinesPerWay = 6;

// One set of `ways` slots under random replacement, n lines visited in turn.
double simulate_random_set(int n, int ways) {
  std::vector<int> slot_of(static_cast<size_t>(n), -1);
  std::vector<int> line_in(static_cast<size_t>(ways), -1);
  SplitMix64 rng(0x5e7f111 ^ (static_cast<uint64_t>(n) << 8) ^ static_cast<uint64_t>(ways));
  constexpr int kWarmRounds = 64;
  constexpr long kCounted = 100000;
  long hits = 0;
  const long total = static_cast<long>(kWarmRounds) * n + kCounted;
  for (long t = 0; t < total; ++t) {
    const int line = static_cast<int>(t % n);
    const bool hit = slot_of[static_cast<size_t>(line)] >= 0;
    if (!hit) {
      const auto victim = static_cast<size_t>(rng.below(static_cast<uint32_t>(ways)));
      if (line_in[victim] >= 0) slot_of[static_cast<size_t>(line_in[victim])] = -1;
      line_in[victim] = line;
      slot_of[static_cast<size_t>(line)] = static_cast<int>(victim);
    }
    if (t >= total - kCounted && hit) ++hits;
  }
  return static_cast<double>(hits) / kCounted;
}

// The nontrivial root of h = (1 - 1/w)^((n - 1)(1 - h)): a line survives
// each of the other n - 1 lines' misses between two of its visits with
// probability 1 - 1/w.
double mean_field_random_set(int n, int ways) {
  const double d = -std::log1p(-1.0 / ways) * (n - 1);
  return d > 1 ? survival_fixed_point(d) : 1.0;
}

// mean_field_random_set, solved once per (n, ways) and thread: a fit asks
// for the same few pairs at every footprint and candidate it tries.
double mean_field_random_set_once(int n, int ways) {
  thread_local std::unordered_map<uint64_t, double> solved;
  const uint64_t key = (uint64_t{static_cast<uint32_t>(n)} << 32) | static_cast<uint32_t>(ways);
  const auto [at, fresh] = solved.try_emplace(key, 0.0);
  if (fresh) at->second = mean_field_random_set(n, ways);
  return at->second;
}

double set_overflow_hit_rate(double footprint, double capacity, double width_octaves) {
  return 1 / (1 + std::exp(std::log2(footprint / capacity) / width_octaves));
}

// Where h crosses 1/2, interpolated in log footprint.
double half_crossing(std::span<const double> x, std::span<const double> h) {
  for (size_t j = 1; j < x.size(); ++j) {
    if (h[j] > 0.5) continue;
    const double t = h[j - 1] == h[j] ? 0.5 : std::clamp((h[j - 1] - 0.5) / (h[j - 1] - h[j]), 0.0, 1.0);
    return std::exp(std::log(x[j - 1]) + t * (std::log(x[j]) - std::log(x[j - 1])));
  }
  return x.back();
}

// Squared error of a model against h, both read relative to the next
// level as measured at far_x (see fit_capacity).
template <class Model>
double sse(std::span<const double> x, std::span<const double> h, double far_x, Model model) {
  const double tail = far_x > 0 ? model(far_x) : 0.0;
  const double scale = tail < 1 ? 1 / (1 - tail) : 1.0;
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += std::pow((model(x[i]) - tail) * scale - h[i], 2);
  return s;
}

// The closest non-increasing sequence to h in least squares (pool adjacent
// violators). A hit fraction cannot rise as the footprint grows, so a point
// that does is noise; pooling it with its neighbours keeps one disturbed
// point from deciding where the curve crosses 1/2.
std::vector<double> non_increasing(std::span<const double> h) {
  std::vector<double> level, weight;
  for (double v : h) {
    level.push_back(v);
    weight.push_back(1);
    while (level.size() > 1 && level[level.size() - 2] < level.back()) {
      const double w = weight[weight.size() - 2] + weight.back();
      const double m =
          (level[level.size() - 2] * weight[weight.size() - 2] + level.back() * weight.back()) / w;
      level.pop_back();
      weight.pop_back();
      level.back() = m;
      weight.back() = w;
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < level.size(); ++i) out.insert(out.end(), static_cast<size_t>(weight[i]), level[i]);
  return out;
}

}  // namespace

double random_set_hit_rate(int n, int ways) {
  if (n <= ways) return 1.0;
  if (ways < 1) return 0.0;  // a set with no ways holds nothing
  if (ways > kMaxTabulatedWays) return mean_field_random_set_once(n, ways);
  // Built once per associativity, on first use (every fit of a rise asks
  // for the same few), safely if analyses run on several threads.
  static std::array<std::vector<double>, kMaxTabulatedWays + 1> table;
  static std::array<std::once_flag, kMaxTabulatedWays + 1> built;
  auto& rates = table[static_cast<size_t>(ways)];
  std::call_once(built[static_cast<size_t>(ways)], [&] {
    // Running minimum: the rate falls with n, and a simulated tail of a
    // few hits in a thousand would otherwise wobble by its noise.
    for (int lines = ways + 1; lines <= kTabulatedLinesPerWay * ways; ++lines)
      rates.push_back(std::min(rates.empty() ? 1.0 : rates.back(), simulate_random_set(lines, ways)));
  });
  if (n > kTabulatedLinesPerWay * ways) return std::min(rates.back(), mean_field_random_set_once(n, ways));
  return rates[static_cast<size_t>(n - ways - 1)];
}

double sets_filling_random_hit_rate(double ratio, double ways) {
  if (ratio <= 1) return 1.0;
  const double m = ways * ratio;  // lines per set on average
  const double whole = std::floor(m);
  const double share = m - whole;  // sets holding one line more
  const int n = static_cast<int>(whole), w = static_cast<int>(ways);
  return ((1 - share) * whole * random_set_hit_rate(n, w) + share * (whole + 1) * random_set_hit_rate(n + 1, w)) /
         m;
}

namespace {

// Grid searches over log capacity (and log width): a handful of points and
// two parameters need no cleverer optimiser, and a grid cannot diverge.
constexpr int kSteps = 400;
// Associativities a sets-filling rise is tried with (a 2-way rise spans
// 0.58 octave, a 64-way one 0.02: steeper than that is a cliff). Not 1: a
// direct-mapped rise is a straight ramp over an octave, which a smooth rise
// centred on the capacity also draws.
constexpr double kWays[] = {2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64};
// The same under random replacement, up to 16 ways (wider, the rise is
// within a few percent of the fully associative random one, which has a
// parameter less). Its tail is long (a 2-way cache still hits 14% of the
// loads at 2 C), so it is compared as the analysis sees it, relative to the
// next level read at far_x. Only this model: the fully associative random
// one, so compared, draws any one-octave ramp that ends where the next
// plateau begins, and a ramp is read where half the loads hit.
constexpr double kRandomWays[] = {2, 3, 4, 6, 8, 12, 16};
// Hit fractions are read off noisy latencies: a fit better than this rms is
// no better (the BIC's floor on the residual).
constexpr double kResidualFloorRms = 0.02;

// Each model's least squared error over the grid, and where it was.
struct GridFits {
  double rr = std::numeric_limits<double>::max(), rr_capacity = 0;                // random replacement
  double so = std::numeric_limits<double>::max(), so_width = 0;                   // set overflow
  double sf = std::numeric_limits<double>::max(), sf_capacity = 0, sf_ways = 0;   // sets filling, LRU
  double sfr = std::numeric_limits<double>::max(), sfr_capacity = 0, sfr_ways = 0;  // sets filling, random
  // Random replacement with two slots to a line: its tail is long too (15%
  // of the loads still hit at 4 C), so it is compared relative to the next
  // level read at far_x as well.
  double lrr = std::numeric_limits<double>::max(), lrr_capacity = 0;
};

GridFits grid_fits(std::span<const double> x, const std::vector<double>& h, double far_x, bool slots_may_pair) {
  GridFits g;
  const double lo = std::log(x.front() / 2), hi = std::log(x.back() * 2);
  for (int i = 0; i <= kSteps; ++i) {
    const double c = std::exp(lo + (hi - lo) * i / kSteps);
    for (double w : kWays) {
      const double e3 = sse(x, h, 0.0, [&](double f) { return sets_filling_hit_rate(f / c, w); });
      if (e3 < g.sf) g.sf = e3, g.sf_capacity = c, g.sf_ways = w;
    }
    for (double w : kRandomWays) {
      const double e4 = sse(x, h, far_x, [&](double f) { return sets_filling_random_hit_rate(f / c, w); });
      if (e4 < g.sfr) g.sfr = e4, g.sfr_capacity = c, g.sfr_ways = w;
    }
    const double e = sse(x, h, 0.0, [&](double f) { return random_replacement_hit_rate(f / c); });
    if (e < g.rr) g.rr = e, g.rr_capacity = c;
    if (slots_may_pair) {
      const double e5 = sse(x, h, far_x, [&](double f) { return random_line_revisit_hit_rate(f / c); });
      if (e5 < g.lrr) g.lrr = e5, g.lrr_capacity = c;
    }
    for (int k = 0; k <= 40; ++k) {
      const double w = 0.02 * std::pow(150.0, k / 40.0);  // 0.02 .. 3 octaves
      const double e2 = sse(x, h, 0.0, [&](double f) { return set_overflow_hit_rate(f, c, w); });
      if (e2 < g.so) g.so = e2, g.so_width = w;
    }
  }
  return g;
}

// BIC of a fit of `params` parameters with squared error `err` over n
// points, the error held to the residual floor.
double bic(double err, double n, int params) {
  const double floor = n * kResidualFloorRms * kResidualFloorRms;
  return n * std::log(std::max(err, floor) / n) + params * std::log(n);
}

// Slots sharing lines: h = min(1, C / F) is a candidate too, one parameter
// (a device that keeps a sampler's texels together, the H200's 2D path,
// still rises sharply, and the other models read it). Its capacity where it
// wins.
std::optional<double> line_revisit_capacity(std::span<const double> x, const std::vector<double>& h,
                                            const GridFits& g) {
  const double lo = std::log(x.front() / 2), hi = std::log(x.back() * 2);
  double best_lr = std::numeric_limits<double>::max(), lr_capacity = 0;
  for (int i = 0; i <= kSteps; ++i) {
    const double c = std::exp(lo + (hi - lo) * i / kSteps);
    const double e = sse(x, h, 0.0, [&](double f) { return std::min(1.0, c / f); });
    if (e < best_lr) best_lr = e, lr_capacity = c;
  }
  const double n = static_cast<double>(x.size());
  const double others = std::min({bic(g.rr, n, 1), bic(g.so, n, 2), bic(std::min(g.sf, g.sfr), n, 2)});
  if (bic(best_lr, n, 1) < others) return lr_capacity;
  return std::nullopt;
}

// Which model reads the capacity, from the fits' BICs.
void choose_model(std::span<const double> x, const GridFits& g, bool slots_may_pair, CapacityFit& fit) {
  const double n = static_cast<double>(x.size());
  const double bic_rr = bic(g.rr, n, 1);
  const double bic_so = bic(g.so, n, 2);
  const double bic_sf = bic(g.sf, n, 2);
  const double bic_sfr = bic(g.sfr, n, 2);
  const double bic_lrr = bic(g.lrr, n, 1);
  // The better of the two sets-filling readings (LRU or random replacement)
  // stands for both below.
  const bool lru_fills = bic_sf <= bic_sfr;
  const double bic_fill = std::min(bic_sf, bic_sfr);
  const auto take_fill = [&] {
    fit.model = lru_fills ? MissModel::kSetsFilling : MissModel::kSetsFillingRandom;
    fit.capacity_bytes = lru_fills ? g.sf_capacity : g.sfr_capacity;
    fit.ways = lru_fills ? g.sf_ways : g.sfr_ways;
  };
  // Sets filling needs at least 6 points in the rise: it reads the capacity
  // at the rise's start rather than its middle, and with a handful of points
  // both two-parameter fits reach the noise floor and cannot be told apart
  // (the synthetic split-L2 rises of test_cache_hierarchy have 4), so there
  // the reading right for unevenly filling sets is kept. A probe refined to
  // 1/16 octave puts 6-11 points in a 2-16-way rise.
  //
  // A cache of at most 4 KiB (the smallest page) spans no more than a page
  // whatever its ways, so its sets cannot fill unevenly: there the choice is
  // between sets filling and random replacement alone, from 3 points (a
  // 1 KiB 4-way texture cache's rise spans 4 lines, 4 footprints at most).
  constexpr size_t kMinPointsForSetsFilling = 6;
  constexpr double kSmallestPage = 4096;
  const bool within_a_page = fit.capacity_bytes <= kSmallestPage;
  // Line revisits under random replacement read where misses begin as well,
  // and need as many points to be told from the others. It is taken only
  // where it draws the rise well (hit fractions within kLineRevisitRms rms):
  // with one parameter and a fixed shape it would win a rise that no model
  // draws on the parameter count alone.
  constexpr double kLineRevisitRms = 0.05;
  const bool enough_for_shape = x.size() >= kMinPointsForSetsFilling;
  const bool line_revisits_fit = slots_may_pair && std::sqrt(g.lrr / n) <= kLineRevisitRms;
  if (within_a_page && x.size() >= 3 && bic_fill < bic_rr) {
    take_fill();
  } else if (enough_for_shape && line_revisits_fit && bic_lrr < std::min({bic_fill, bic_rr, bic_so})) {
    fit.model = MissModel::kLineRevisitsRandom;
    fit.capacity_bytes = g.lrr_capacity;
  } else if (enough_for_shape && bic_fill < bic_rr && bic_fill < bic_so) {
    take_fill();
  } else if (bic_rr < bic_so) {
    fit.model = MissModel::kRandomReplacement;
    fit.capacity_bytes = g.rr_capacity;
  } else {
    // The fit decides that half the loads hitting is the capacity; where
    // that is is read from the data themselves, since real rises are rarely
    // as symmetric as the logistic (a CPU L2's runs on into a drifting L3).
    fit.model = MissModel::kSetOverflow;
    fit.width_octaves = g.so_width;
  }
}

}  // namespace

CapacityFit fit_capacity(std::span<const double> x, std::span<const double> raw_hit, bool slots_share_lines,
                         double far_x, bool slots_may_pair) {
  CapacityFit fit;
  if (x.empty()) return fit;
  const std::vector<double> h = non_increasing(raw_hit);
  fit.capacity_bytes = half_crossing(x, h);
  const auto inside = std::count_if(h.begin(), h.end(), [](double v) { return v > 0.05 && v < 0.95; });
  if (inside < 2) return fit;
  const GridFits g = grid_fits(x, h, far_x, slots_may_pair);
  if (slots_share_lines)
    if (std::optional<double> c = line_revisit_capacity(x, h, g)) {
      fit.model = MissModel::kLineRevisits;
      fit.capacity_bytes = *c;
      return fit;
    }
  choose_model(x, g, slots_may_pair, fit);
  return fit;
}

}  // namespace gpuscope::analysis
