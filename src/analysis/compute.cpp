#include "analysis/compute.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

RateRatio round_rate_ratio(double raw) {
  RateRatio r;
  r.raw = raw;
  if (!(raw > 0)) return r;
  // Candidates 2^k for k in [-6, 2]: the rates hardware is built with.
  const double k = std::clamp(std::round(std::log2(raw)), -6.0, 2.0);
  r.rounded = std::exp2(k);
  r.log2_error = std::abs(std::log2(raw) - k);
  return r;
}

DualIssue detect_dual_issue(double mixed_gops, double alone_a_gops, double alone_b_gops, double threshold) {
  DualIssue d;
  if (!(alone_a_gops > 0) || !(alone_b_gops > 0)) return d;
  const double serial = 1 / (0.5 / alone_a_gops + 0.5 / alone_b_gops);
  d.gain = mixed_gops / serial;
  d.detected = d.gain > threshold;
  return d;
}

double cycles_from_ns(double ns, double clock_mhz) { return ns * clock_mhz / 1000.0; }

double spread_confidence(const Point& p) {
  const double spread = summarize(p.samples).rel_spread;
  return std::clamp(0.9 - 4 * std::max(0.0, spread - 0.02), 0.4, 0.9);
}

double ops_per_clock_per_cu(double gops, double compute_units, double clock_mhz) {
  if (!(compute_units > 0) || !(clock_mhz > 0)) return 0;
  return gops * 1000.0 / (compute_units * clock_mhz);
}

namespace {

// The fastest form (point) of a throughput series.
const Point* best_point(const Series& s) {
  const Point* best = nullptr;
  for (const auto& p : s.points)
    if (!best || p.y > best->y) best = &p;
  return best;
}

const Point* point_at(const Series& s, double x) {
  for (const auto& p : s.points)
    if (p.x == x) return &p;
  return nullptr;
}

std::string meta_string(const Series& s, const char* key) {
  return s.meta.contains(key) && s.meta[key].is_string() ? s.meta[key].get<std::string>() : "";
}

// "compute.<type>.<op>" -> {type, op}; false for other ids.
bool split_id(const std::string& id, const std::string& prefix, std::string& type, std::string& op) {
  if (id.rfind(prefix, 0) != 0) return false;
  const std::string rest = id.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string::npos) return false;
  type = rest.substr(0, dot);
  op = rest.substr(dot + 1);
  return !type.empty() && !op.empty();
}

Finding make(const std::string& id, double value, const std::string& unit, double confidence,
             const std::string& evidence, std::string method, std::string note) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.confidence = confidence;
  f.evidence = {evidence};
  f.method = std::move(method);
  f.note = std::move(note);
  return f;
}

std::string form_label(const Series& s, double lanes) {
  if (s.meta.contains("forms"))
    for (const auto& f : s.meta["forms"])
      if (f.value("values_per_op", 0.0) == lanes) return f.value("elem", "") + " via " + f.value("path", "");
  return fmt::format("x{}", lanes);
}

void throughput_findings(const Results& r, std::vector<Finding>& out) {
  const double cus = r.device.compute_units;
  const double clock = r.device.clock_mhz;
  const Series* fma32 = r.find_series("compute.fp32.fma");
  const Point* fma32_best = fma32 ? best_point(*fma32) : nullptr;
  for (const auto& s : r.series) {
    std::string type, op;
    if (s.probe != "compute" || !split_id(s.id, "compute.", type, op) || op.rfind("mix_", 0) == 0) continue;
    const Point* best = best_point(s);
    if (!best || best->samples.empty()) continue;
    const std::string base = s.id;
    const double flop = s.meta.value("flop_per_op", 1.0);
    const double per_clk = ops_per_clock_per_cu(best->y, cus, clock);

    std::string note = fmt::format(
        "{:.1f} ops per clock per compute unit at the reported {} MHz and {} units", per_clk, clock, cus);
    if (flop != 1) note += fmt::format("; {:.2f} T(FL)OP/s counting {} per op", best->y * flop / 1000, flop);
    note += fmt::format("; best form: {}", form_label(s, best->x));
    for (const auto& p : s.points)
      if (&p != best) note += fmt::format("; {}: {:.1f} Gop/s", form_label(s, p.x), p.y);
    if (const std::string counted = meta_string(s, "counted"); !counted.empty())
      note += "; an op is " + counted;

    Finding tp = make(base + ".throughput_gops", best->y, "Gop/s", spread_confidence(*best), s.id,
                      "median rate of the fastest vector form, many independent chains per work-item, every "
                      "compute unit filled",
                      note);
    tp.low = *std::min_element(best->samples.begin(), best->samples.end());
    tp.high = *std::max_element(best->samples.begin(), best->samples.end());
    out.push_back(tp);
    if (per_clk > 0)
      out.push_back(
          make(base + ".ops_per_clock_per_cu", per_clk, "op/clk/CU", spread_confidence(*best) * 0.8, s.id,
               "throughput / (compute units x reported clock)",
               "the reported clock is the driver's (usually the maximum boost) clock; the clock under "
               "load may differ"));
    if (fma32_best && fma32_best->y > 0) {
      const RateRatio rr = round_rate_ratio(best->y / fma32_best->y);
      Finding f = make(
          base + ".rate_vs_fp32_fma", rr.rounded, "", std::clamp(0.95 - 1.5 * rr.log2_error, 0.2, 0.95), s.id,
          "throughput over fp32 fma throughput (best forms), rounded in log2 to the nearest of 1/64 "
          "... 1/2, 1, 2, 4",
          fmt::format("raw ratio {:.4f}", rr.raw));
      f.evidence.push_back(fma32->id);
      f.low = rr.raw;
      f.high = rr.raw;
      out.push_back(f);
    }
  }
}

void dual_issue_findings(const Results& r, std::vector<Finding>& out) {
  struct Mix {
    const char* series;
    const char* a;
    const char* b;
    const char* id;
  };
  const Mix mixes[] = {
      {"compute.fp32.mix_fma_add", "compute.fp32.fma", "compute.fp32.add", "compute.dual_issue.fp32_fma_add"},
      {"compute.fp32.mix_fma_iadd", "compute.fp32.fma", "compute.int32.add",
       "compute.dual_issue.fp32_fma_int32_add"}};
  for (const auto& m : mixes) {
    const Series* mix = r.find_series(m.series);
    const Series* a = r.find_series(m.a);
    const Series* b = r.find_series(m.b);
    if (!mix || !a || !b) continue;
    const Point* pm = point_at(*mix, 1);
    const Point* pa = point_at(*a, 1);
    const Point* pb = point_at(*b, 1);
    if (!pm || !pa || !pb) continue;
    // Read conservatively: the mix's lower quartile against the single ops'
    // upper quartiles, so that a noisy device (a shared CPU) does not show
    // dual issue by chance.
    const auto q = [](const Point& p, double at) {
      return p.samples.empty() ? p.y : quantile(p.samples, at);
    };
    const DualIssue d = detect_dual_issue(q(*pm, 0.25), q(*pa, 0.75), q(*pb, 0.75));
    // Issued one after the other (one pipe, or one issue slot per clock),
    // the mix runs at the harmonic mean of the two rates.
    const double serial = 1 / (0.5 / pa->y + 0.5 / pb->y);
    Finding f;
    f.id = m.id;
    f.value = d.detected;
    f.confidence = std::clamp(0.5 + 2 * std::abs(d.gain - 1.15), 0.5, 0.9) *
                   std::min({spread_confidence(*pm), spread_confidence(*pa), spread_confidence(*pb)}) / 0.9;
    f.evidence = {mix->id, a->id, b->id};
    f.method =
        "half the chains of one kind, half of the other, interleaved in one instruction stream (scalar "
        "forms); dual issue when the mix's lower quartile exceeds 1.15x the rate of the two issued one after "
        "the other (the harmonic mean of their upper quartiles)";
    f.note = fmt::format(
        "mix {:.1f} Gop/s vs {:.1f} and {:.1f} alone (medians); gain {:.2f}x over issuing them one after "
        "the other ({:.1f}), quartile against quartiles",
        pm->y, pa->y, pb->y, d.gain, serial);
    out.push_back(f);
  }
}

void latency_findings(const Results& r, std::vector<Finding>& out) {
  const double clock = r.device.clock_mhz;
  for (const auto& s : r.series) {
    std::string type, op;
    if (s.probe != "oplatency" || !split_id(s.id, "oplatency.", type, op) || s.points.empty()) continue;
    const Point& p = s.points.front();
    if (p.samples.empty()) continue;
    const std::string base = fmt::format("compute.{}.{}", type, op);
    const double conf = spread_confidence(p);
    std::string counted = meta_string(s, "counted");
    Finding ns = make(base + ".latency_ns", p.y, "ns", conf, s.id,
                      "one work-item, one dependent chain; median time per op over timed launches",
                      counted.empty() ? "" : "an op is " + counted);
    ns.low = *std::min_element(p.samples.begin(), p.samples.end());
    ns.high = *std::max_element(p.samples.begin(), p.samples.end());
    out.push_back(ns);

    if (s.meta.contains("cycles_per_op") && s.meta["cycles_per_op"].is_array() &&
        !s.meta["cycles_per_op"].empty()) {
      const auto cyc = s.meta["cycles_per_op"].get<std::vector<double>>();
      const double c = median(cyc);
      Finding f = make(
          base + ".latency_cycles", c, "cycles", conf, s.id,
          "the device's own cycle counter read before and after the chain",
          fmt::format("the clock these imply is {:.0f} MHz (ns per op vs cycles per op; reported {} MHz)",
                      c / p.y * 1000, clock));
      f.low = *std::min_element(cyc.begin(), cyc.end());
      f.high = *std::max_element(cyc.begin(), cyc.end());
      out.push_back(f);
    } else if (clock > 0) {
      Finding f =
          make(base + ".latency_cycles", cycles_from_ns(p.y, clock), "cycles", conf * 0.6, s.id,
               "latency in ns times the reported clock",
               fmt::format("at the reported {} MHz; the clock during the run was not measured, so the "
                           "cycle count is uncertain (too high if the device ran slower)",
                           clock));
      f.low = cycles_from_ns(*ns.low, clock);
      f.high = cycles_from_ns(*ns.high, clock);
      out.push_back(f);
    }
  }
}

}  // namespace

std::vector<Finding> compute_findings(const Results& r) {
  std::vector<Finding> out;
  throughput_findings(r, out);
  dual_issue_findings(r, out);
  latency_findings(r, out);
  return out;
}

}  // namespace gpuscope::analysis
