#include "report/reconcile.hpp"
#include "report/run_index.hpp"

#include "report/format.hpp"
#include "report/unmeasured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

namespace gpuscope {

namespace {

bool ends_with_any(const std::string& s, std::initializer_list<const char*> tails) {
  return std::any_of(tails.begin(), tails.end(), [&](const char* t) { return s.ends_with(t); });
}

// Whether x and y agree within `tol`: the larger over the smaller at most 1 + tol.
bool agree(double x, double y, double tol) {
  x = std::abs(x);
  y = std::abs(y);
  if (x == y) return true;
  const double lo = std::min(x, y), hi = std::max(x, y);
  return lo > 0 && hi / lo <= 1 + tol + 1e-12;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string joined(const std::vector<std::string>& w, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (out.empty() ? "" : " ") + w[i];
  return out;
}

// The places two method sentences differ, word by word (longest common
// subsequence), each with a word of context before it: "x 8" / "x 4". At
// most `max_hunks`; the count of the rest after them.
std::string method_differences(const std::string& ma, const std::string& mb, const std::string& la,
                               const std::string& lb, size_t max_hunks = 3) {
  // A method is a sentence or two; a file's longer ones are compared on
  // their first words only, so that the table below stays small.
  constexpr size_t kMaxWords = 400;
  auto a = words(ma), b = words(mb);
  a.resize(std::min(a.size(), kMaxWords));
  b.resize(std::min(b.size(), kMaxWords));
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint16_t>> lcs(n + 1, std::vector<uint16_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Hunk {
    size_t a0, a1, b0, b1;
  };
  std::vector<Hunk> hunks;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i;
      ++j;
      continue;
    }
    Hunk h{i, i, j, j};
    while ((i < n || j < m) && !(i < n && j < m && a[i] == b[j])) {
      if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]))
        ++i;
      else
        ++j;
    }
    h.a1 = i;
    h.b1 = j;
    hunks.push_back(h);
  }
  std::string out;
  for (size_t k = 0; k < std::min(hunks.size(), max_hunks); ++k) {
    const Hunk& h = hunks[k];
    const size_t ca = h.a0 > 0 ? h.a0 - 1 : h.a0, cb = h.b0 > 0 ? h.b0 - 1 : h.b0;
    const std::string sa = joined(a, ca, h.a1), sb = joined(b, cb, h.b1);
    out += fmt::format("{}{} \"{}\" / {} \"{}\"", out.empty() ? "" : "; ", la, sa.empty() ? "" : sa, lb, sb);
  }
  if (hunks.size() > max_hunks) out += fmt::format("; {} more", hunks.size() - max_hunks);
  return out;
}

// The method with every number replaced by '#': two methods that differ only
// there are one method applied to other data.
std::string method_shape(const std::string& m) {
  std::string out;
  bool in_number = false;
  for (char c : m) {
    const bool digit = (c >= '0' && c <= '9') || (in_number && (c == '.' || c == ','));
    if (digit && !in_number) out += '#';
    if (!digit) out += c;
    in_number = digit;
  }
  return out;
}

const Finding* finding(const Results& r, const char* id) { return r.find_finding(id); }

std::string mhz(double v) { return format_significant(v) + " MHz"; }

// A device feature that decides how findings under `prefix` are measured.
struct FeatureRule {
  const char* prefix;  // finding id prefix; "*latency_cycles" matches the suffix
  const char* what;
  std::function<std::string(const DeviceFeatures&)> value;  // "" where absent
};

const std::vector<FeatureRule>& feature_rules() {
  const auto flag = [](bool DeviceFeatures::*m) {
    return [m](const DeviceFeatures& f) { return f.*m ? std::string("yes") : std::string(); };
  };
  static const std::vector<FeatureRule> rules = {
      {"compute.fp16.", "half-precision arithmetic (fp16)", flag(&DeviceFeatures::fp16)},
      {"compute.fp64.", "double-precision arithmetic (fp64)", flag(&DeviceFeatures::fp64)},
      {"compute.int8.", "the API's packed int8 dot product", flag(&DeviceFeatures::integer_dot_product)},
      {"texture.", "images", flag(&DeviceFeatures::images)},
      {"atomics.", "64-bit atomics", flag(&DeviceFeatures::int64_atomics)},
      {"host.svm", "shared virtual memory", flag(&DeviceFeatures::shared_virtual_memory)},
      {"host.", "host-mapped device buffers", flag(&DeviceFeatures::host_mapping)},
      {"*latency_cycles", "the core's cycle counter", flag(&DeviceFeatures::cycle_counter)},
      {"device.measured_clock_mhz", "the core's cycle counter", flag(&DeviceFeatures::cycle_counter)},
      {"compute.", "vendor assembly in kernels",
       [](const DeviceFeatures& f) { return f.inline_asm; }},
      {"exec.wave_width", "claimed wave widths",
       [](const DeviceFeatures& f) {
         std::string s;
         for (uint32_t w : f.subgroup_sizes) s += (s.empty() ? "" : ", ") + std::to_string(w);
         return s;
       }},
  };
  return rules;
}

bool rule_applies(const FeatureRule& r, const std::string& id) {
  const std::string p = r.prefix;
  return p.starts_with('*') ? id.ends_with(p.substr(1)) : id.starts_with(p);
}

// Every likely reason the two results record for `id` disagreeing.
std::vector<std::string> likely_reasons(const Results& ra, const Results& rb, const Finding& a, const Finding& b,
                                        ToleranceClass cls, const std::string& la, const std::string& lb) {
  std::vector<std::string> out;
  if (a.unit != b.unit)
    out.push_back(fmt::format("they count different things: {} in {}, {} in {}", la,
                              a.unit.empty() ? "plain numbers" : a.unit, lb, b.unit.empty() ? "plain numbers" : b.unit));
  // The API's features that decide how this finding is measured.
  for (const auto& rule : feature_rules()) {
    if (!rule_applies(rule, a.id)) continue;
    const std::string va = rule.value(ra.device.features), vb = rule.value(rb.device.features);
    if (va == vb) continue;
    const auto has = [](const std::string& v) { return v.empty() ? std::string("lacks") : "has (" + v + ")"; };
    out.push_back(fmt::format("the APIs differ in {}: {} {}, {} {}", rule.what, la, has(va), lb, has(vb)));
  }
  // Methods: another kernel form or estimator, or the same one on other data.
  if (a.method != b.method) {
    const bool same_shape = method_shape(a.method) == method_shape(b.method);
    out.push_back(fmt::format("{}: {}", same_shape ? "same method, other numbers in it" : "measured differently",
                              method_differences(a.method, b.method, la, lb)));
  }
  if (a.evidence != b.evidence) {
    const auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
      return s.empty() ? std::string("none") : s;
    };
    out.push_back(fmt::format("read from other series: {} {}; {} {}", la, list(a.evidence), lb, list(b.evidence)));
  }
  // Clocks: cycles and per-clock rates count the reported clock; anything
  // timed depends on the clock the GPU ran at.
  const bool per_clock = a.unit == "cycles" || a.unit.find("clk") != std::string::npos;
  if (per_clock && ra.device.clock_mhz != rb.device.clock_mhz && ra.device.clock_mhz && rb.device.clock_mhz)
    out.push_back(fmt::format("the drivers report different clocks ({} {}, {} {}), and this counts the reported one",
                              la, mhz(ra.device.clock_mhz), lb, mhz(rb.device.clock_mhz)));
  const Finding* ca = finding(ra, "device.measured_clock_mhz");
  const Finding* cb = finding(rb, "device.measured_clock_mhz");
  if (ca && cb && a.id != ca->id && !agree(number(*ca), number(*cb), 0.05) &&
      (cls == ToleranceClass::latency || cls == ToleranceClass::rate))
    out.push_back(fmt::format("the GPU ran at different clocks: {} {}, {} {} measured", la, mhz(number(*ca)), lb,
                              mhz(number(*cb))));
  if (a.id.find("per_cu") != std::string::npos && ra.device.compute_units != rb.device.compute_units)
    out.push_back(fmt::format("the APIs report different compute unit counts ({} {}, {} {})", la,
                              ra.device.compute_units, lb, rb.device.compute_units));
  for (const auto& [f, l] : {std::pair{&a, la}, std::pair{&b, lb}})
    if (is_low_confidence(*f)) out.push_back(fmt::format("{} is a guess (confidence {:.2f})", l, f->confidence));
  if (a.low && a.high && b.low && b.high && *a.low <= *b.high && *b.low <= *a.high)
    out.push_back(fmt::format("the intervals overlap ({} {}, {} {}): within what the runs resolve", la,
                              format_interval(a), lb, format_interval(b)));
  if (out.empty())
    out.push_back("no difference in method, series, features or clocks is recorded: the APIs' compilers or "
                  "drivers differ here, or the runs' noise does (repeat each run to tell)");
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// What why_absent reads of a run, built once per reconciliation.
struct RunFacts {
  const Results& results;
  RunIndex index;
  std::vector<Unmeasured> unmeasured;
  explicit RunFacts(const Results& r) : results(r), index(r), unmeasured(gpuscope::unmeasured(r)) {}
};

// Why `other` has no finding `f.id` that `has` has.
std::string why_absent(const RunFacts& has_facts, const Finding& f, const RunFacts& other_facts,
                       const std::string& lo) {
  const Results& other = other_facts.results;
  for (const auto& u : other.unfound)
    if (u.id == f.id) return fmt::format("{} looked for it: {}", lo, first_line(u.reason));
  std::vector<std::string> probes;
  for (const auto& e : f.evidence) {
    const Series* s = has_facts.index.series(e);
    const std::string probe = s && !s->probe.empty() ? s->probe : e.substr(0, e.find('.'));
    if (std::find(probes.begin(), probes.end(), probe) == probes.end()) probes.push_back(probe);
  }
  for (const auto& p : probes)
    for (const auto& s : other.skipped)
      if (s.probe == p) return fmt::format("{} skipped {}: {}", lo, p, first_line(s.reason));
  const auto names = [&](const std::string& what) {
    for (const auto& e : f.evidence)
      if (what == e || what.starts_with(e + " ")) return true;
    return false;
  };
  for (const auto& s : other.series) {
    if (!s.meta.is_object() || !s.meta.contains("not_measured_time_budget")) continue;
    const nlohmann::json& left = s.meta["not_measured_time_budget"];
    if (!left.is_array()) continue;
    for (const auto& k : left)
      if (k.is_string() && names(k.get<std::string>()))
        return fmt::format("{}'s {} probe ran out of time before {}", lo, s.probe.empty() ? s.id : s.probe,
                           k.get<std::string>());
  }
  for (const auto& m : other_facts.unmeasured)
    if (names(m.what) || (!m.series.empty() && names(m.series)))
      return fmt::format("{} could not measure {}: {}", lo, m.what, first_line(m.reason));
  // Runs record the probes they ran; files without the record say nothing.
  if (other.run.is_object() && other.run.contains("probes") && other.run["probes"].is_object())
    for (const auto& p : probes)
      if (!other.run["probes"].contains(p)) return fmt::format("{} did not run {}", lo, p);
  for (const auto& e : f.evidence)
    if (!other_facts.index.series(e))
      return fmt::format("{} has no series {} (its probe measured otherwise)", lo, e);
  return fmt::format("{}'s series gave no such finding", lo);
}

}  // namespace

ToleranceClass tolerance_class(const Finding& f) {
  const std::string& u = f.unit;
  if (std::holds_alternative<bool>(f.value) || std::holds_alternative<std::string>(f.value))
    return ToleranceClass::exact;
  if (u == "B" || u == "registers" || u == "live values" || u == "ops") return ToleranceClass::size;
  if (u == "ns" || u == "us" || u == "ms" || u == "s" || u == "cycles") return ToleranceClass::latency;
  if (u.ends_with("/s") || u == "Gops" || u == "MHz" || u.find("/clk") != std::string::npos)
    return ToleranceClass::rate;
  if (u == "lanes" || u == "waves" || u == "work-groups" || u == "work-items") return ToleranceClass::exact;
  if (u.empty()) {
    if (f.id.ends_with("_rel_error")) return ToleranceClass::none;
    if (ends_with_any(f.id, {"_ratio", "_fraction", ".fraction_of_dram", ".rate_vs_fp32_fma"}))
      return ToleranceClass::rate;
    return ToleranceClass::exact;  // a count
  }
  return ToleranceClass::none;
}

double tolerance_of(ToleranceClass c) {
  switch (c) {
    case ToleranceClass::size:
    case ToleranceClass::latency:
      return 0.10;
    case ToleranceClass::rate:
      return 0.05;
    default:
      return 0;
  }
}

const char* tolerance_class_name(ToleranceClass c) {
  switch (c) {
    case ToleranceClass::size: return "size";
    case ToleranceClass::latency: return "latency";
    case ToleranceClass::rate: return "rate";
    case ToleranceClass::exact: return "exact";
    default: return "not compared";
  }
}

size_t Reconciliation::count(ReconciledFinding::Status s) const {
  return static_cast<size_t>(
      std::count_if(both.begin(), both.end(), [&](const ReconciledFinding& r) { return r.status == s; }));
}

Reconciliation reconcile(const Results& ra, const Results& rb, const std::string& la, const std::string& lb) {
  using Status = ReconciledFinding::Status;
  Reconciliation out;
  out.identity = match_device_identity(ra.device, rb.device);
  const RunFacts a(ra), b(rb);
  for (const auto& fa : ra.findings) {
    const Finding* fb = b.index.finding(fa.id);
    if (!fb) {
      out.only.push_back({fa.id, &fa, true, why_absent(a, fa, b, lb)});
      continue;
    }
    ReconciledFinding r;
    r.id = fa.id;
    r.a = &fa;
    r.b = fb;
    r.tolerance = tolerance_class(fa);
    const double tol = tolerance_of(r.tolerance);
    const auto* xa = std::get_if<double>(&fa.value);
    const auto* xb = std::get_if<double>(&fb->value);
    if (xa && xb && *xa != 0) r.ratio = *xb / *xa;
    if (fa.value.index() != fb->value.index()) {
      r.status = Status::outside;
    } else if (r.tolerance == ToleranceClass::none) {
      r.status = Status::not_compared;
      r.reasons.push_back(fa.id.ends_with("_rel_error")
                              ? "a check's residual error, not a property of the GPU"
                              : fmt::format("no tolerance for unit '{}'", fa.unit));
    } else if (const auto* la_list = std::get_if<std::vector<double>>(&fa.value)) {
      const auto& lb_list = std::get<std::vector<double>>(fb->value);
      bool same = la_list->size() == lb_list.size();
      for (size_t i = 0; same && i < la_list->size(); ++i) same = agree((*la_list)[i], lb_list[i], tol);
      r.status = same ? Status::within : Status::outside;
    } else if (const auto* ba = std::get_if<bool>(&fa.value)) {
      r.status = *ba == std::get<bool>(fb->value) ? Status::within : Status::outside;
    } else if (const auto* name = std::get_if<std::string>(&fa.value)) {
      r.status = *name == std::get<std::string>(fb->value) ? Status::within : Status::outside;
    } else {
      r.status = agree(*xa, *xb, tol) ? Status::within : Status::outside;
    }
    if (r.status == Status::outside) r.reasons = likely_reasons(ra, rb, fa, *fb, r.tolerance, la, lb);
    out.both.push_back(std::move(r));
  }
  for (const auto& fb : rb.findings)
    if (!a.index.finding(fb.id)) out.only.push_back({fb.id, &fb, false, why_absent(b, fb, a, la)});
  return out;
}

std::string identity_sentence(const Results& a, const Results& b) {
  const DeviceIdentityMatch m = match_device_identity(a.device, b.device);
  switch (m.verdict) {
    case DeviceIdentityMatch::Verdict::same: {
      const std::string api_a = api_of_id(a.device.id), api_b = api_of_id(b.device.id);
      const std::string through = api_a == api_b ? fmt::format("both through {}", api_a)
                                                 : fmt::format("through {} and {}", api_a, api_b);
      return fmt::format("the same GPU, {} (same {} {})", through, m.by, m.detail);
    }
    case DeviceIdentityMatch::Verdict::different:
      return fmt::format("different GPUs ({} {})", m.by == "uuid" ? "uuids" : "PCI addresses", m.detail);
    default:
      return fmt::format("not known to be one GPU: {}", m.detail);
  }
}

}  // namespace gpuscope
