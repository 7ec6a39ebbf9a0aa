#include "analysis/tlb_shape.hpp"

#include "analysis/miss_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuscope::analysis {
namespace {

const char* shape_name(TlbShape m) {
  switch (m) {
    case TlbShape::kRevisits:
      return "several loads per page in random order (misses 1 - R/F)";
    case TlbShape::kFewRevisits:
      return "a few loads per page in random order, LRU (misses (1 - R/F)^(1 - 1/s))";
    case TlbShape::kRandom:
      return "random replacement, fully associative";
    case TlbShape::kSetsLru:
      return "set associative, sets filling together";
    case TlbShape::kSetsRandom:
      return "set associative, random replacement";
    default:
      return "sharp (LRU, fully associative)";
  }
}

double miss_fraction(TlbShape m, double r, double param) {
  if (r <= 1) return 0;
  switch (m) {
    case TlbShape::kRevisits:
      return 1 - 1 / r;
    case TlbShape::kFewRevisits:
      return std::pow(1 - 1 / r, 1 - 1 / param);
    case TlbShape::kRandom:
      return 1 - random_replacement_hit_rate(r);
    case TlbShape::kSetsLru:
      return 1 - sets_filling_hit_rate(r, param);
    case TlbShape::kSetsRandom:
      return 1 - sets_filling_random_hit_rate(r, param);
    default:
      return 1;
  }
}

}  // namespace

std::string TlbShapeFit::describe() const {
  std::string s = shape_name(shape);
  if (shape == TlbShape::kFewRevisits)
    s += fmt::format(" (s = {:g})", param);
  else if (param > 0)
    s += fmt::format(" ({:g} ways)", param);
  return s;
}

std::optional<TlbShapeFit> fit_tlb_shape(const TlbCurve& c, const std::vector<double>& sigma, double base,
                                         size_t first, size_t last) {
  const size_t n = last - first + 1;
  if (n < 3) return std::nullopt;
  const double lo = std::log2(c.footprint[first]) - 1, hi = std::log2(c.footprint[last]);
  std::optional<TlbShapeFit> best;
  struct Variant {
    TlbShape shape;
    double param;
  };
  const Variant variants[] = {
      {TlbShape::kSharp, 0},        {TlbShape::kRevisits, 0},    {TlbShape::kRandom, 0},
      {TlbShape::kFewRevisits, 2},  {TlbShape::kFewRevisits, 4}, {TlbShape::kFewRevisits, 8},
      {TlbShape::kFewRevisits, 16}, {TlbShape::kSetsLru, 2},     {TlbShape::kSetsLru, 4},
      {TlbShape::kSetsLru, 8},      {TlbShape::kSetsRandom, 2},  {TlbShape::kSetsRandom, 4},
      {TlbShape::kSetsRandom, 8}};
  for (const Variant& v : variants) {
    std::vector<std::pair<double, double>> grid;  // (log2 R, chi2)
    TlbShapeFit f;
    f.shape = v.shape;
    f.param = v.param;
    for (double l = lo; l <= hi; l += 1.0 / 64) {
      const double reach = std::exp2(l);
      double smm = 0, sme = 0;
      std::vector<double> m(n);
      for (size_t i = 0; i < n; ++i) {
        const double w = 1 / (sigma[first + i] * sigma[first + i]);
        m[i] = miss_fraction(v.shape, c.footprint[first + i] / reach, v.param);
        smm += w * m[i] * m[i];
        sme += w * m[i] * (c.excess_ns[first + i] - base);
      }
      if (smm <= 0) continue;
      const double p = sme / smm;
      if (p <= 0) continue;
      double chi2 = 0;
      for (size_t i = 0; i < n; ++i)
        chi2 += std::pow((c.excess_ns[first + i] - base - p * m[i]) / sigma[first + i], 2);
      grid.emplace_back(l, chi2);
      if (chi2 < f.chi2) {
        f.chi2 = chi2;
        f.reach = reach;
        f.penalty = p;
        f.penalty_sigma = 1 / std::sqrt(smm);
      }
    }
    if (grid.empty()) continue;
    f.reach_low = f.reach_high = f.reach;
    f.saturation = miss_fraction(v.shape, c.footprint[last] / f.reach, v.param);
    for (const auto& [l, chi2] : grid)
      if (chi2 <= f.chi2 + 4) {
        f.reach_low = std::min(f.reach_low, std::exp2(l));
        f.reach_high = std::max(f.reach_high, std::exp2(l));
      }
    f.bic = f.chi2 + f.parameters() * std::log(static_cast<double>(n));
    if (!best || f.bic < best->bic) best = f;
  }
  return best;
}

}  // namespace gpuscope::analysis
