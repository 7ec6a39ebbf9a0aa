// The candidates and the patterns that separate them (matrix_numerics.hpp
// states the method), the patterns' launch inputs and their series.
#include "analysis/matrix_numerics.hpp"

#include "core/error.hpp"
#include "core/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace gpuscope::analysis {
namespace {

// Proposals drawn per round before the classes still unsplit are left so,
// and the run of proposals without a split that ends a round early: an f16
// x f16 -> f32 shape splits all but 2 of its 1792 candidates within about
// 150 kept of 1500 drawn; an f16 result leaves hundreds of classes that
// only a double rounding at its tie could split, which more drawing hardly
// reaches (4000 a round kept 773 patterns and left 316 classes, in 10 s).
constexpr int kMaxProposalsPerRound = 4000;
constexpr int kMaxProposalsWithoutSplit = 2000;
// Products reach down to 2^-kProductSpan of the running value: past any
// internal width the candidates hold (kNumericsMaxSumBits) by 8 bits.
constexpr int kProductSpan = kNumericsMaxSumBits + 8;

struct TypeRange {
  bool is_float = false;
  int man_bits = 0, emin = 0, emax = 0;  // normal exponents [emin, emax] (f8e4m3: without its top binade)
};

TypeRange range_of(MatrixType t) {
  const MatrixFormat f = matrix_type_format(t);
  if (!f.is_float) return {};
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  return {true, f.man_bits, 1 - bias, bias};
}

int below(SplitMix64& rng, int bound) { return static_cast<int>(rng.below(static_cast<uint32_t>(bound))); }
int between(SplitMix64& rng, int lo, int hi) { return lo + below(rng, hi - lo + 1); }

// A normal value of the type: 2^e times a significand with `frac` random
// fraction bits (at most the type's), e clamped into its normal range.
double normal_value(SplitMix64& rng, const TypeRange& t, int e, int frac) {
  frac = std::min(frac, t.man_bits);
  const double f = frac > 0 ? static_cast<double>(rng.next() & ((uint64_t{1} << frac) - 1)) : 0;
  return std::ldexp(1 + std::ldexp(f, -frac), std::clamp(e, t.emin, t.emax));
}

// How many fraction bits a drawn value gets: none (a power of two), one,
// or all the type has, so that products are short or fill their width.
int draw_frac(SplitMix64& rng, int man_bits) {
  const int pick = below(rng, 4);
  return pick == 0 ? 0 : pick == 1 ? 1 : man_bits;
}

// Product i as a_i x b_i = 2^t (negative: -2^t), with t clamped to what
// normal inputs reach.
void set_power(SplitMix64& rng, const TypeRange& ta, const TypeRange& tb, NumericsPattern& p, uint32_t i,
               int t, bool negative) {
  t = std::clamp(t, ta.emin + tb.emin, ta.emax + tb.emax);
  const int ea = between(rng, std::max(ta.emin, t - tb.emax), std::min(ta.emax, t - tb.emin));
  p.a[i] = std::ldexp(negative ? -1.0 : 1.0, ea);
  p.b[i] = std::ldexp(1.0, t - ea);
}

// A stage-1 proposal: c at 2^e0 (or zero), products at 2^(e0 - j) for j in
// [0, kProductSpan] on some positions, random signs, and now and then one
// product equal to -c (cancellation); or a tie (below).
NumericsPattern draw_core(SplitMix64& rng, const MatrixChainShape& s) {
  const TypeRange ta = range_of(s.a), tb = range_of(s.b), tc = range_of(s.c), tr = range_of(s.result);
  NumericsPattern p;
  p.a.assign(s.k, 0.0);
  p.b.assign(s.k, 0.0);
  // Normal inputs give products from 2^pmin to about 2^pmax. c sits a little
  // above the largest products at most, so that the spread of kProductSpan
  // below it is reached; c and k products of at most 2^(e0 + 1) stay inside
  // the result's normal range.
  const int pmin = ta.emin + tb.emin, pmax = ta.emax + tb.emax;
  const int headroom = 2 + static_cast<int>(std::ceil(std::log2(s.k + 1.0)));
  const int lo = std::max(pmin, tr.emin + 2), hi = std::min(pmax + 8, tr.emax - headroom);
  const int e0 = between(rng, lo, std::max(lo, hi));
  std::vector<uint32_t> at(s.k);
  for (uint32_t i = 0; i < s.k; ++i) at[i] = i;
  for (uint32_t i = 0; i + 1 < s.k; ++i) std::swap(at[i], at[i + below(rng, static_cast<int>(s.k - i))]);
  if (s.k >= 2 && below(rng, 4) == 0) {
    // A tie at the result's width: c with the result's bits, a product of
    // half its last bit, and a small one above or below the tie: what an
    // internal rounding before the final one changes.
    const bool negative = below(rng, 2);
    p.c = (negative ? -1 : 1) * normal_value(rng, tc, e0, std::min(tc.man_bits, tr.man_bits));
    set_power(rng, ta, tb, p, at[0], e0 - tr.man_bits - 1, negative);
    set_power(rng, ta, tb, p, at[1], e0 - tr.man_bits - 2 - below(rng, kProductSpan - tr.man_bits),
              below(rng, 2));
    return p;
  }
  if (below(rng, 8) != 0)
    p.c = (below(rng, 2) ? -1 : 1) * normal_value(rng, tc, e0, draw_frac(rng, tc.man_bits));
  const uint32_t counts[] = {1, 2, 3, std::max<uint32_t>(1, s.k / 2), s.k};
  const uint32_t nonzero = std::min(s.k, counts[below(rng, 5)]);
  const int sign_mode = below(rng, 3);  // 0: all positive, 1: all negative, 2: mixed
  const int span = below(rng, 2) ? kProductSpan : below(rng, 4) + 1;  // wide spread or near c
  for (uint32_t n = 0; n < nonzero; ++n) {
    const uint32_t i = at[n];
    const int target = e0 - below(rng, span + 1);
    const int elo = std::max(ta.emin, target - tb.emax), ehi = std::min(ta.emax, target - tb.emin);
    const int ea = elo <= ehi ? between(rng, elo, ehi) : std::clamp(target, ta.emin, ta.emax);
    const bool negative = sign_mode == 1 || (sign_mode == 2 && below(rng, 2));
    p.a[i] = (negative ? -1 : 1) * normal_value(rng, ta, ea, draw_frac(rng, ta.man_bits));
    p.b[i] = normal_value(rng, tb, target - ea, draw_frac(rng, tb.man_bits));
  }
  // Cancellation: one product -c, where A holds c.
  if (p.c != 0 && below(rng, 4) == 0 && matrix_round_to_type(s.a, p.c) == p.c &&
      std::abs(p.c) >= std::ldexp(1.0, ta.emin) && std::abs(p.c) <= std::ldexp(1.0, ta.emax)) {
    p.a[at[0]] = -p.c;
    p.b[at[0]] = 1;
  }
  return p;
}

// Stage 2's proposals, fixed: the types' smallest subnormals and normals and
// their largest values, alone or against c.
std::vector<NumericsPattern> special_proposals(const MatrixChainShape& s) {
  std::vector<NumericsPattern> out;
  const auto one = [&](double a0, double b0, double c) {
    NumericsPattern p;
    p.a.assign(s.k, 0.0);
    p.b.assign(s.k, 0.0);
    p.a[0] = a0;
    p.b[0] = b0;
    p.c = c;
    p.stage = 2;
    out.push_back(std::move(p));
  };
  if (!range_of(s.result).is_float) {
    const double hi = matrix_exact_integer_limit(s.result),
                 lo = matrix_type_is_signed(s.result) ? -hi - 1 : 0;
    const double c_hi = std::min(hi, matrix_exact_integer_limit(s.c));
    one(1, 1, c_hi);
    if (matrix_type_is_signed(s.a) && lo < 0 && matrix_type_is_signed(s.c))
      one(-1, 1, std::max(lo, -c_hi - 1));
    const double amax = matrix_exact_integer_limit(s.a), bmax = matrix_exact_integer_limit(s.b);
    one(amax, bmax, c_hi);
    return out;
  }
  const TypeRange ta = range_of(s.a), tb = range_of(s.b), tc = range_of(s.c);
  const auto tiny = [](const TypeRange& t) { return std::ldexp(1.0, t.emin - t.man_bits); };
  const auto least = [](const TypeRange& t) { return std::ldexp(1.0, t.emin); };
  const auto largest = [](MatrixType t, const TypeRange& r) {
    return matrix_round_to_type(t, std::ldexp(2 - std::ldexp(1.0, -r.man_bits), r.emax));
  };
  for (int eb : {0, tb.emax / 2, tb.emax}) {
    one(tiny(ta), std::ldexp(1.0, eb), 0);  // a subnormal A
    one(std::ldexp(1.0, eb), tiny(tb), 0);  // a subnormal B
    one(3 * tiny(ta), std::ldexp(1.0, eb), 0);
  }
  one(0, 0, tiny(tc));  // a subnormal C
  one(0, 0, 3 * tiny(tc));
  for (int eb : {-1, -2, -tb.man_bits, tb.emin})  // normal inputs, products past the result's normal range
    one(least(ta), std::ldexp(1.0, eb), 0);
  one(least(ta), least(tb), 0);
  one(largest(s.a, ta), largest(s.b, tb), 0);  // past the result's range
  one(largest(s.a, ta), largest(s.b, tb), largest(s.c, tc));
  one(-largest(s.a, ta), largest(s.b, tb), -largest(s.c, tc));
  one(largest(s.a, ta), 1, largest(s.c, tc));
  return out;
}

uint64_t bits_of(const MatrixChainShape& s, const MatrixArithmetic& a, const NumericsPattern& p) {
  return matrix_value_bits(s.result, matrix_dot(a, s, p.a, p.b, p.c));
}

// Whether every candidate's result of a stage-1 pattern is finite and
// normal or zero (so that subnormal and overflow behaviour cannot act).
bool normal_everywhere(const MatrixChainShape& s, const std::vector<MatrixArithmetic>& all,
                       const NumericsPattern& p) {
  const double least = std::ldexp(1.0, range_of(s.result).emin);
  for (const auto& a : all) {
    const double d = matrix_dot(a, s, p.a, p.b, p.c);
    if (!std::isfinite(d) || (d != 0 && std::abs(d) < least)) return false;
  }
  return true;
}

using Classes = std::vector<std::vector<size_t>>;

// `classes` (candidate indices that agree so far) split by their results on
// p; nullopt where no class splits (the common case: nothing is copied).
std::optional<Classes> split(const MatrixChainShape& s, const std::vector<MatrixArithmetic>& all,
                             const NumericsPattern& p, const Classes& classes) {
  std::vector<std::vector<uint64_t>> results(classes.size());
  bool any = false;
  for (size_t ci = 0; ci < classes.size(); ++ci) {
    if (classes[ci].size() == 1) continue;
    for (size_t i : classes[ci]) {
      results[ci].push_back(bits_of(s, all[i], p));
      any = any || results[ci].back() != results[ci].front();
    }
  }
  if (!any) return std::nullopt;
  Classes next;
  for (size_t ci = 0; ci < classes.size(); ++ci) {
    if (classes[ci].size() == 1) {
      next.push_back(classes[ci]);
      continue;
    }
    std::map<uint64_t, std::vector<size_t>> by;
    for (size_t j = 0; j < classes[ci].size(); ++j) by[results[ci][j]].push_back(classes[ci][j]);
    for (auto& [bits, members] : by) next.push_back(std::move(members));
  }
  return next;
}

size_t unresolved(const std::vector<std::vector<size_t>>& classes) {
  return static_cast<size_t>(
      std::count_if(classes.begin(), classes.end(), [](const auto& c) { return c.size() > 1; }));
}

}  // namespace

std::string numerics_unsupported(const MatrixChainShape& s) {
  const bool fa = matrix_type_format(s.a).is_float, fb = matrix_type_format(s.b).is_float,
             fc = matrix_type_format(s.c).is_float, fr = matrix_type_format(s.result).is_float;
  if (s.result == MatrixType::f64 || s.c == MatrixType::f64 || s.a == MatrixType::f64)
    return "f64: the models' exact sums and a series' numbers do not hold f64's bits";
  if (fa != fr || fb != fr || fc != fr) return "integer and float types mixed in one shape";
  return "";
}

std::vector<MatrixArithmetic> numerics_core_candidates(const MatrixChainShape& s) {
  std::vector<MatrixArithmetic> out;
  std::set<std::string> seen;
  const auto add = [&](const MatrixArithmetic& a) {
    const MatrixArithmetic c = matrix_arithmetic_canonical(a, s);
    if (seen.insert(matrix_arithmetic_text(c, s)).second) out.push_back(c);
  };
  if (!matrix_type_format(s.result).is_float) {
    for (auto o : {MatrixIntegerOverflow::wrap, MatrixIntegerOverflow::saturate}) {
      MatrixArithmetic a;
      a.integer_overflow = o;
      add(a);
    }
    return out;
  }
  std::vector<uint32_t> blocks;
  for (uint32_t b = 1; b < s.k; b *= 2) blocks.push_back(b);
  blocks.push_back(0);
  std::vector<int> widths = {0};
  for (int w = kNumericsMinSumBits; w <= kNumericsMaxSumBits; ++w) widths.push_back(w);
  for (auto products : {MatrixProducts::exact, MatrixProducts::input, MatrixProducts::accumulator})
    for (int w : widths)
      for (auto sr : {MatrixRounding::nearest_even, MatrixRounding::toward_zero})
        for (auto al : {MatrixAlignment::exact, MatrixAlignment::truncate})
          for (uint32_t b : blocks)
            for (auto order : {MatrixOrder::fused, MatrixOrder::pairwise})
              for (auto rr : {MatrixRounding::nearest_even, MatrixRounding::toward_zero}) {
                MatrixArithmetic a;
                a.products = products;
                a.sum_bits = w;
                a.sum_rounding = sr;
                a.alignment = al;
                a.block = b;
                a.order = order;
                a.result_rounding = rr;
                add(a);
              }
  return out;
}

std::vector<MatrixArithmetic> numerics_special_candidates(const MatrixChainShape& s,
                                                          const MatrixArithmetic& core) {
  std::vector<MatrixArithmetic> out;
  if (!matrix_type_format(s.result).is_float) return numerics_core_candidates(s);
  for (bool in : {true, false})
    for (bool outs : {true, false})
      for (auto o : {MatrixOverflow::infinity, MatrixOverflow::saturate}) {
        MatrixArithmetic a = core;
        a.subnormal_inputs = in;
        a.subnormal_outputs = outs;
        a.overflow = o;
        out.push_back(a);
      }
  return out;
}

NumericsPlan numerics_plan(const MatrixChainShape& s) {
  if (const std::string why = numerics_unsupported(s); !why.empty())
    throw UsageError("matrix numerics: " + why);
  NumericsPlan plan;
  plan.shape = s;
  const bool is_float = matrix_type_format(s.result).is_float;
  const std::vector<MatrixArithmetic> core = numerics_core_candidates(s);
  plan.candidates = core.size();
  SplitMix64 rng(0x6e756d6572696373ULL ^ (uint64_t{s.m} << 48) ^ (uint64_t{s.n} << 32) ^
                 (uint64_t{s.k} << 16) ^ (static_cast<uint64_t>(s.a) << 8) ^
                 (static_cast<uint64_t>(s.c) << 4) ^ static_cast<uint64_t>(s.result));
  for (int round = 0; is_float && round < kNumericsRounds; ++round) {
    std::vector<std::vector<size_t>> classes(1);
    for (size_t i = 0; i < core.size(); ++i) classes[0].push_back(i);
    for (int tries = 0, stale = 0;
         unresolved(classes) > 0 && tries < kMaxProposalsPerRound && stale < kMaxProposalsWithoutSplit;
         ++tries, ++stale) {
      NumericsPattern p = draw_core(rng, s);
      auto next = split(s, core, p, classes);
      if (next && normal_everywhere(s, core, p)) {
        classes = std::move(*next);
        plan.patterns.push_back(std::move(p));
        stale = 0;
      }
    }
    plan.unresolved = unresolved(classes);
  }
  // Stage 2 (integers: their only stage): the fixed proposals that give two
  // of the behaviours different results under the default core, each kept
  // also where it repeats a split already made (independent evidence).
  const std::vector<MatrixArithmetic> special = numerics_special_candidates(s, MatrixArithmetic{});
  std::vector<std::vector<size_t>> classes(1);
  for (size_t i = 0; i < special.size(); ++i) classes[0].push_back(i);
  for (NumericsPattern& p : special_proposals(s)) {
    std::set<uint64_t> results;
    for (const auto& a : special) results.insert(bits_of(s, a, p));
    if (results.size() < 2) continue;
    if (auto next = split(s, special, p, classes)) classes = std::move(*next);
    plan.patterns.push_back(std::move(p));
  }
  if (!is_float) plan.unresolved = unresolved(classes);
  return plan;
}

NumericsInputs numerics_inputs(const NumericsPlan& plan) {
  const MatrixChainShape& s = plan.shape;
  const uint32_t d = std::min(s.m, s.n);
  NumericsInputs in;
  in.subgroups = (plan.patterns.size() + d - 1) / d;
  const size_t ea = matrix_type_bytes(s.a), eb = matrix_type_bytes(s.b), ec = matrix_type_bytes(s.c);
  const size_t a_n = size_t{s.m} * s.k, b_n = size_t{s.k} * s.n, c_n = size_t{s.m} * s.n;
  std::vector<double> a(in.subgroups * a_n, 0.0), b(in.subgroups * b_n, 0.0), c(in.subgroups * c_n, 0.0);
  for (size_t p = 0; p < plan.patterns.size(); ++p) {
    const NumericsPattern& pat = plan.patterns[p];
    const size_t g = p / d, i = p % d;
    for (uint32_t kk = 0; kk < s.k; ++kk) {
      a[g * a_n + i * s.k + kk] = pat.a[kk];
      b[g * b_n + kk * s.n + i] = pat.b[kk];
    }
    c[g * c_n + i * s.n + i] = pat.c;
  }
  const auto encode = [](MatrixType t, size_t eb_, const std::vector<double>& v) {
    std::vector<std::byte> out(v.size() * eb_);
    for (size_t i = 0; i < v.size(); ++i) matrix_encode_value(t, v[i], out.data() + i * eb_);
    return out;
  };
  in.a_bytes = encode(s.a, ea, a);
  in.b_bytes = encode(s.b, eb, b);
  in.c_bytes = encode(s.c, ec, c);
  in.out_bytes = in.subgroups * c_n * matrix_type_bytes(s.result);
  return in;
}

std::vector<uint64_t> numerics_observed(const NumericsPlan& plan, std::span<const std::byte> out) {
  const MatrixChainShape& s = plan.shape;
  const uint32_t d = std::min(s.m, s.n);
  const size_t er = matrix_type_bytes(s.result), c_n = size_t{s.m} * s.n;
  if (out.size() < (plan.patterns.size() + d - 1) / d * c_n * er)
    throw DeviceError(fmt::format("matrix numerics: {} bytes of results for {} patterns", out.size(),
                                  plan.patterns.size()));
  std::vector<uint64_t> bits(plan.patterns.size());
  for (size_t p = 0; p < plan.patterns.size(); ++p) {
    const std::byte* at = out.data() + ((p / d) * c_n + (p % d) * s.n + p % d) * er;
    for (size_t i = 0; i < er; ++i)
      bits[p] |= static_cast<uint64_t>(std::to_integer<uint8_t>(at[i])) << (8 * i);
  }
  return bits;
}

Series numerics_series(const NumericsPlan& plan, std::span<const uint64_t> observed) {
  const MatrixChainShape& s = plan.shape;
  Series out;
  out.id = "matrix." + matrix_shape_tag(s) + ".numerics";
  out.probe = "matrix";
  out.x = {"pattern", ""};
  out.y = {"result bits", ""};
  nlohmann::json patterns = nlohmann::json::array();
  for (size_t p = 0; p < plan.patterns.size(); ++p) {
    const auto y = static_cast<double>(observed[p]);
    out.points.push_back({static_cast<double>(p), y, {y}});
    const NumericsPattern& pat = plan.patterns[p];
    patterns.push_back({{"a", pat.a}, {"b", pat.b}, {"c", pat.c}, {"stage", pat.stage}});
  }
  out.meta = {{"kernel", "matrix/numerics"},
              {"shape",
               {{"a", matrix_type_tag(s.a)},
                {"b", matrix_type_tag(s.b)},
                {"c", matrix_type_tag(s.c)},
                {"result", matrix_type_tag(s.result)},
                {"m", s.m},
                {"n", s.n},
                {"k", s.k}}},
              {"candidates", plan.candidates},
              {"unresolved", plan.unresolved},
              {"patterns", patterns},
              {"method",
               "one D = A x B + C per subgroup; each pattern one dot product on D's diagonal; y: the "
               "result's bits"}};
  return out;
}

}  // namespace gpuscope::analysis
