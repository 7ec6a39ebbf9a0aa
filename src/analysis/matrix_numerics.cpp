// The inference of matrix_numerics.hpp: the candidates that match every
// pattern, and each property with its evidence.
#include "analysis/matrix_numerics.hpp"

#include "analysis/unfound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace gpuscope::analysis {
namespace {

// A property's confidence is 1 - kDoubtPerPattern^n for the n patterns that
// rule out its nearest other value: one pattern alone may be a device's
// quirk on that input (a special case in hardware), each more that agrees
// halves that doubt. kMaxConfidence: the models are hypotheses, and a
// device may differ from all of them somewhere no pattern looked.
constexpr double kDoubtPerPattern = 0.5;
constexpr double kMaxConfidence = 0.95;
constexpr size_t kQuotedPatterns = 2;  // patterns a note quotes

enum class Prop {
  products,
  sum_bits,
  sum_rounding,
  alignment,
  block,
  order,
  result_rounding,
  subnormal_inputs,
  subnormal_outputs,
  overflow,
  integer_overflow
};

struct PropInfo {
  Prop prop;
  const char* id;
  int stage;
  const char* unit;
};

constexpr PropInfo kFloatProps[] = {
    {Prop::products, "products", 1, ""},
    {Prop::sum_bits, "sum_bits", 1, "bits"},
    {Prop::sum_rounding, "sum_rounding", 1, ""},
    {Prop::alignment, "alignment", 1, ""},
    {Prop::block, "block", 1, "products"},
    {Prop::order, "order", 1, ""},
    {Prop::result_rounding, "result_rounding", 1, ""},
    {Prop::subnormal_inputs, "subnormal_inputs", 2, ""},
    {Prop::subnormal_outputs, "subnormal_outputs", 2, ""},
    {Prop::overflow, "overflow", 2, ""},
};
constexpr PropInfo kIntegerProps[] = {{Prop::integer_overflow, "integer_overflow", 2, ""}};

// x with the property set to each value the candidates take.
std::vector<MatrixArithmetic> alternatives(Prop p, const MatrixArithmetic& x, const MatrixChainShape& s) {
  std::vector<MatrixArithmetic> out;
  const auto with = [&](auto&& set) {
    MatrixArithmetic a = x;
    set(a);
    out.push_back(a);
  };
  const auto roundings = {MatrixRounding::nearest_even, MatrixRounding::toward_zero};
  switch (p) {
    case Prop::products:
      for (auto v : {MatrixProducts::exact, MatrixProducts::input, MatrixProducts::accumulator})
        with([&](MatrixArithmetic& a) { a.products = v; });
      break;
    case Prop::sum_bits:
      with([](MatrixArithmetic& a) { a.sum_bits = 0; });
      for (int w = kNumericsMinSumBits; w <= kNumericsMaxSumBits; ++w)
        with([&](MatrixArithmetic& a) { a.sum_bits = w; });
      break;
    case Prop::sum_rounding:
      for (auto v : roundings) with([&](MatrixArithmetic& a) { a.sum_rounding = v; });
      break;
    case Prop::alignment:
      for (auto v : {MatrixAlignment::exact, MatrixAlignment::truncate})
        with([&](MatrixArithmetic& a) { a.alignment = v; });
      break;
    case Prop::block:
      with([](MatrixArithmetic& a) { a.block = 0; });
      for (uint32_t b = 1; b < s.k; b *= 2) with([&](MatrixArithmetic& a) { a.block = b; });
      break;
    case Prop::order:
      for (auto v : {MatrixOrder::fused, MatrixOrder::pairwise})
        with([&](MatrixArithmetic& a) { a.order = v; });
      break;
    case Prop::result_rounding:
      for (auto v : roundings) with([&](MatrixArithmetic& a) { a.result_rounding = v; });
      break;
    case Prop::subnormal_inputs:
      for (bool v : {true, false}) with([&](MatrixArithmetic& a) { a.subnormal_inputs = v; });
      break;
    case Prop::subnormal_outputs:
      for (bool v : {true, false}) with([&](MatrixArithmetic& a) { a.subnormal_outputs = v; });
      break;
    case Prop::overflow:
      for (auto v : {MatrixOverflow::infinity, MatrixOverflow::saturate})
        with([&](MatrixArithmetic& a) { a.overflow = v; });
      break;
    case Prop::integer_overflow:
      for (auto v : {MatrixIntegerOverflow::wrap, MatrixIntegerOverflow::saturate})
        with([&](MatrixArithmetic& a) { a.integer_overflow = v; });
      break;
  }
  return out;
}

FindingValue value_of(Prop p, const MatrixArithmetic& x, const MatrixChainShape& s) {
  switch (p) {
    case Prop::products:
      return std::string(matrix_products_name(x.products));
    case Prop::sum_bits:
      return x.sum_bits == 0 ? FindingValue(std::string("exact")) : FindingValue(double(x.sum_bits));
    case Prop::sum_rounding:
      return std::string(matrix_rounding_name(x.sum_rounding));
    case Prop::alignment:
      return std::string(matrix_alignment_name(x.alignment));
    case Prop::block:
      return static_cast<double>(x.block == 0 ? s.k : x.block);
    case Prop::order:
      return std::string(matrix_order_name(x.order));
    case Prop::result_rounding:
      return std::string(matrix_rounding_name(x.result_rounding));
    case Prop::subnormal_inputs:
      return x.subnormal_inputs;
    case Prop::subnormal_outputs:
      return x.subnormal_outputs;
    case Prop::overflow:
      return std::string(matrix_overflow_name(x.overflow));
    case Prop::integer_overflow:
      return std::string(matrix_integer_overflow_name(x.integer_overflow));
  }
  return std::string();
}

std::string value_text(const FindingValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "kept" : "flushed";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "?";
}

std::string rounding_words(MatrixRounding r) {
  return r == MatrixRounding::nearest_even ? "to nearest, ties to even"
                                           : "toward zero (truncated): each rounding errs toward zero, so "
                                             "long sums of like-signed products drift "
                                             "low in magnitude";
}

// What the property's value means for a user, in plain words.
std::string meaning(Prop p, const MatrixArithmetic& x, const MatrixChainShape& s) {
  const std::string r = std::string(matrix_type_tag(s.result));
  const int result_bits = matrix_type_format(s.result).man_bits + 1;
  switch (p) {
    case Prop::products:
      if (x.products == MatrixProducts::exact) return "products are exact before they are added";
      return fmt::format("each product is rounded to {} significand bits (the {} type's) before it is added",
                         matrix_product_bits(x, s),
                         matrix_type_tag(x.products == MatrixProducts::input ? s.a : s.c));
    case Prop::sum_bits:
      if (x.sum_bits == 0)
        return fmt::format(
            "the products and C are added exactly and rounded once to {} (or the unit keeps more than "
            "{} bits)",
            r, kNumericsMaxSumBits);
      return fmt::format(
          "the internal sum keeps {} significand bits{}: a product's bits below 2^-{} of the running sum are "
          "lost (a "
          "product smaller than that, entirely){}",
          x.sum_bits, x.sum_bits < result_bits ? fmt::format(", fewer than the {} result holds", r) : "",
          x.sum_bits - 1,
          x.sum_bits < 24
              ? fmt::format("; a long dot product built from this unit's {}-product steps accumulates "
                            "that loss: add partial sums in f32 outside the unit every few steps "
                            "(DeepSeek-V3 promotes Hopper fp8 sums to f32 every 128 products)",
                            s.k)
              : "");
    case Prop::sum_rounding:
      return "each internal sum is rounded " + rounding_words(x.sum_rounding);
    case Prop::alignment:
      return x.alignment == MatrixAlignment::exact
                 ? "the terms are added exactly before the internal sum is rounded"
                 : "each term is first cut to the largest term's grid, its bits past the adder's width "
                   "dropped before "
                   "adding (as Fasi et al. found on NVIDIA's V100 and A100 tensor cores)";
    case Prop::block: {
      const uint32_t b = x.block == 0 ? s.k : x.block;
      return fmt::format("{} products are added together with the running sum before one rounding{}", b,
                         b < s.k
                             ? fmt::format("; the {} of one step take {} such blocks in order", s.k, s.k / b)
                             : " (the whole step)");
    }
    case Prop::order:
      return x.order == MatrixOrder::fused
                 ? "a block's products and the running sum enter one multi-operand addition"
                 : "a block's products are added in pairs, each pair's sum rounded, before the running sum";
    case Prop::result_rounding:
      return fmt::format("the final sum is rounded to {} {}", r, rounding_words(x.result_rounding));
    case Prop::subnormal_inputs:
      return x.subnormal_inputs ? "subnormal inputs count at their value"
                                : "subnormal inputs (A, B or C) count as zero";
    case Prop::subnormal_outputs:
      return x.subnormal_outputs ? fmt::format("results in {}'s subnormal range are kept", r)
                                 : fmt::format("results in {}'s subnormal range are flushed to zero", r);
    case Prop::overflow:
      return x.overflow == MatrixOverflow::infinity
                 ? fmt::format("a result past {}'s largest finite value becomes infinity{}", r,
                               matrix_type_format(s.result).finite_only ? " (NaN: the type has none)" : "")
                 : fmt::format("a result past {}'s largest finite value stays at it (saturates)", r);
    case Prop::integer_overflow:
      return x.integer_overflow == MatrixIntegerOverflow::wrap
                 ? fmt::format("a sum past {}'s range wraps around", r)
                 : fmt::format("a sum past {}'s range saturates at its end", r);
  }
  return "";
}

uint64_t result_bits(const MatrixChainShape& s, const MatrixArithmetic& a, const NumericsPattern& p) {
  return matrix_value_bits(s.result, matrix_dot(a, s, p.a, p.b, p.c));
}

// Every NaN as the type's canonical one (devices differ in NaN payloads).
uint64_t canonical_bits(MatrixType t, uint64_t bits) {
  std::byte b[8];
  for (size_t i = 0; i < 8; ++i) b[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xff);
  const double v = matrix_decode(t, b);
  return std::isnan(v) ? matrix_value_bits(t, v) : bits;
}

std::string bits_text(const MatrixChainShape& s, uint64_t bits) {
  std::byte b[8];
  for (size_t i = 0; i < 8; ++i) b[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xff);
  return fmt::format("0x{:0{}x} ({:g})", bits, matrix_type_bytes(s.result) * 2, matrix_decode(s.result, b));
}

std::string pattern_text(const NumericsPattern& p, size_t index) {
  std::string products;
  size_t shown = 0, more = 0;
  for (size_t i = 0; i < p.a.size(); ++i) {
    if (p.a[i] == 0 || p.b[i] == 0) continue;
    if (shown++ < 3)
      products += fmt::format("{}a{}*b{} = {:g}*{:g}", products.empty() ? "" : ", ", i, i, p.a[i], p.b[i]);
    else
      ++more;
  }
  if (more) products += fmt::format(" and {} more", more);
  return fmt::format("pattern {} (c = {:g}{}{})", index, p.c, products.empty() ? "" : ", ", products);
}

struct Reading {
  const NumericsPlan& plan;
  std::vector<uint64_t> observed;  // canonical bits
  std::vector<size_t> stage[3];    // pattern indices by stage

  std::vector<size_t> mismatches(const MatrixArithmetic& a, int st) const {
    std::vector<size_t> out;
    for (size_t p : stage[st])
      if (result_bits(plan.shape, a, plan.patterns[p]) != observed[p]) out.push_back(p);
    return out;
  }
  bool matches(const MatrixArithmetic& a, int st) const {
    for (size_t p : stage[st])
      if (result_bits(plan.shape, a, plan.patterns[p]) != observed[p]) return false;
    return true;
  }
  std::vector<MatrixArithmetic> consistent(const std::vector<MatrixArithmetic>& cands, int st) const {
    std::vector<MatrixArithmetic> out;
    for (const auto& c : cands)
      if (matches(c, st)) out.push_back(c);
    return out;
  }
  // What the device gave that the nearest candidate does not: for a device
  // that matches none, quoted, never adopted.
  std::string none_note(const std::vector<MatrixArithmetic>& cands, int st) const {
    const MatrixArithmetic* nearest = nullptr;
    std::vector<size_t> worst;
    for (const auto& c : cands) {
      auto m = mismatches(c, st);
      if (!nearest || m.size() < worst.size()) nearest = &c, worst = std::move(m);
    }
    std::string out = fmt::format(
        "behaves like none of the {} models: the nearest ({}) differs on {} of {} patterns", cands.size(),
        matrix_arithmetic_text(*nearest, plan.shape), worst.size(), stage[st].size());
    for (size_t i = 0; i < std::min(kQuotedPatterns, worst.size()); ++i) {
      const size_t p = worst[i];
      out += fmt::format("; {} gave {}, that model {}", pattern_text(plan.patterns[p], p),
                         bits_text(plan.shape, observed[p]),
                         bits_text(plan.shape, result_bits(plan.shape, *nearest, plan.patterns[p])));
    }
    return out;
  }
};

// One property's finding, or its unfound reason, from the candidates
// consistent in its stage.
void read_property(const PropInfo& info, const Reading& rd, const std::vector<MatrixArithmetic>& consistent,
                   const std::string& base, const std::string& series_id, std::vector<Finding>& out) {
  const MatrixChainShape& s = rd.plan.shape;
  const std::string id = base + info.id;
  std::set<std::string> values;
  for (const auto& c : consistent) values.insert(value_text(value_of(info.prop, c, s)));
  if (values.size() > 1) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
    // Stage 2's patterns are the types' extremes, all of them: what they
    // leave apart, no input reaches. Stage 1's are drawn: more might.
    note_unfound(
        id,
        info.stage == 2
            ? fmt::format("no input of these types reaches where the values {} differ (their extremes were tried)",
                                   list)
            : fmt::format("the patterns left {} candidate models that differ in it ({})", consistent.size(),
                          list),
        {series_id});
    return;
  }
  const MatrixArithmetic x = consistent.front();
  const MatrixArithmetic cx = matrix_arithmetic_canonical(x, s);
  const MatrixArithmetic* nearest = nullptr;
  std::vector<size_t> nearest_miss;
  std::vector<MatrixArithmetic> alts;
  for (const auto& a : alternatives(info.prop, x, s))
    if (matrix_arithmetic_canonical(a, s) != cx) alts.push_back(a);
  if (alts.empty()) {
    note_unfound(id,
                 fmt::format("every value gives the same results under the arithmetic found ({})",
                             matrix_arithmetic_text(cx, s)),
                 {series_id});
    return;
  }
  for (const auto& a : alts) {
    auto miss = rd.mismatches(a, info.stage);
    if (!nearest || miss.size() < nearest_miss.size()) nearest = &a, nearest_miss = std::move(miss);
  }
  const FindingValue alt_value = value_of(info.prop, *nearest, s);
  if (nearest_miss.empty()) {
    note_unfound(
        id,
        fmt::format("no pattern separates {} from {}: no input of these types reaches where they differ",
                    value_text(value_of(info.prop, x, s)), value_text(alt_value)),
        {series_id});
    return;
  }
  Finding f;
  f.id = id;
  f.value = value_of(info.prop, x, s);
  f.unit = info.unit;
  f.confidence =
      std::min(kMaxConfidence, 1 - std::pow(kDoubtPerPattern, static_cast<double>(nearest_miss.size())));
  f.evidence = {series_id};
  f.method = fmt::format(
      "{} candidate models of the unit run on the host over {} crafted dot products; the one matching every "
      "pattern's bits, this property against its nearest other value ({}), which {} pattern(s) rule out",
      rd.plan.candidates, rd.plan.patterns.size(), value_text(alt_value), nearest_miss.size());
  f.note = meaning(info.prop, x, s);
  for (size_t i = 0; i < std::min(kQuotedPatterns, nearest_miss.size()); ++i) {
    const size_t p = nearest_miss[i];
    f.note += fmt::format("; {} gave {}, {} would give {}", pattern_text(rd.plan.patterns[p], p),
                          bits_text(s, rd.observed[p]), value_text(alt_value),
                          bits_text(s, result_bits(s, *nearest, rd.plan.patterns[p])));
  }
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> numerics_findings(const NumericsPlan& plan, std::span<const uint64_t> observed,
                                       const std::string& series_id) {
  const MatrixChainShape& s = plan.shape;
  const std::string base = "compute.matrix." + matrix_shape_tag(s) + ".numerics.";
  std::vector<Finding> out;
  if (observed.size() != plan.patterns.size()) {
    note_unfound(base + "matches_model",
                 fmt::format("{} results for {} patterns", observed.size(), plan.patterns.size()),
                 {series_id});
    return out;
  }
  Reading rd{plan, {}, {}};
  for (size_t p = 0; p < observed.size(); ++p) {
    rd.observed.push_back(canonical_bits(s.result, observed[p]));
    rd.stage[plan.patterns[p].stage == 1 ? 1 : 2].push_back(p);
  }
  const bool is_float = matrix_type_format(s.result).is_float;
  std::vector<MatrixArithmetic> core_cands, core_ok;
  std::string none;
  if (is_float) {
    core_cands = numerics_core_candidates(s);
    core_ok = rd.consistent(core_cands, 1);
    if (core_ok.empty()) none = rd.none_note(core_cands, 1);
  }
  // Stage 2 under the core found (the patterns there are single products,
  // which the core hardly touches; without a core, the exact default).
  const std::vector<MatrixArithmetic> special_cands =
      numerics_special_candidates(s, core_ok.empty() ? MatrixArithmetic{} : core_ok.front());
  const std::vector<MatrixArithmetic> special_ok = rd.consistent(special_cands, 2);
  if (none.empty() && special_ok.empty()) none = rd.none_note(special_cands, 2);

  Finding m;
  m.id = base + "matches_model";
  m.value = none.empty();
  m.confidence = kMaxConfidence;
  m.evidence = {series_id};
  m.method = fmt::format("{} crafted dot products against {} candidate models of the unit run on the host",
                         plan.patterns.size(), plan.candidates);
  m.note = none.empty() ? fmt::format("every pattern's bits are what this model gives: {}",
                                      matrix_arithmetic_text(special_ok.front(), s))
                        : none;
  out.push_back(m);
  const std::span<const PropInfo> props =
      is_float ? std::span<const PropInfo>(kFloatProps) : std::span<const PropInfo>(kIntegerProps);
  for (const PropInfo& info : props) {
    if (!none.empty()) {
      note_unfound(base + info.id, "the unit behaves like none of the models (see numerics.matches_model)",
                   {series_id});
      continue;
    }
    read_property(info, rd, info.stage == 1 ? core_ok : special_ok, base, series_id, out);
  }
  return out;
}

std::vector<Finding> matrix_numerics_findings(const Results& r) {
  std::vector<Finding> out;
  for (const Series& s : r.series) {
    // A shape whose numerics did not run says why on its throughput series.
    if (s.probe == "matrix" && s.id.ends_with(".throughput") && s.meta.contains("numerics_not_run") &&
        s.meta["numerics_not_run"].is_string())
      note_unfound("compute.matrix." + s.id.substr(7, s.id.size() - 7 - 11) + ".numerics.matches_model",
                   s.meta["numerics_not_run"].get<std::string>(), {s.id});
    if (s.probe != "matrix" || !s.id.ends_with(".numerics")) continue;
    NumericsPlan plan;
    std::vector<uint64_t> observed;
    try {
      const auto& sh = s.meta.at("shape");
      const auto type = [&](const char* key) {
        const auto t = matrix_type_from_tag(sh.at(key).get<std::string>());
        if (!t) throw std::runtime_error(fmt::format("unknown type {}", sh.at(key).dump()));
        return *t;
      };
      plan.shape = {type("a"),
                    type("b"),
                    type("c"),
                    type("result"),
                    sh.at("m").get<uint32_t>(),
                    sh.at("n").get<uint32_t>(),
                    sh.at("k").get<uint32_t>()};
      plan.candidates = s.meta.value("candidates", size_t{0});
      for (const auto& p : s.meta.at("patterns"))
        plan.patterns.push_back({p.at("a").get<std::vector<double>>(), p.at("b").get<std::vector<double>>(),
                                 p.at("c").get<double>(), p.at("stage").get<int>()});
      for (const Point& pt : s.points) observed.push_back(static_cast<uint64_t>(pt.y));
      for (const auto& p : plan.patterns)
        if (p.a.size() != plan.shape.k || p.b.size() != plan.shape.k)
          throw std::runtime_error("a pattern's length is not the shape's k");
    } catch (const std::exception& e) {
      note_unfound("compute.matrix." + s.id.substr(7, s.id.size() - 7 - 9) + ".numerics.matches_model",
                   fmt::format("the series' patterns cannot be read: {}", e.what()), {s.id});
      continue;
    }
    const auto f = numerics_findings(plan, observed, s.id);
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

}  // namespace gpuscope::analysis
