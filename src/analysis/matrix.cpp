#include "analysis/matrix.hpp"

#include "analysis/compute.hpp"
#include "analysis/confidence_factors.hpp"
#include "analysis/unfound.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::analysis {
namespace {

// "matrix.<tag>.<kind>" -> tag; "" for other ids.
std::string shape_tag(const Series& s, const std::string& kind) {
  const std::string prefix = "matrix.", suffix = "." + kind;
  if (s.probe != "matrix" || s.id.size() <= prefix.size() + suffix.size() || s.id.rfind(prefix, 0) != 0 ||
      !s.id.ends_with(suffix))
    return "";
  return s.id.substr(prefix.size(), s.id.size() - prefix.size() - suffix.size());
}

const Point* best_point(const Series& s) {
  const Point* best = nullptr;
  for (const auto& p : s.points)
    if (!p.samples.empty() && (!best || p.y > best->y)) best = &p;
  return best;
}

void bounds(Finding& f, const std::vector<double>& v) {
  f.low = *std::min_element(v.begin(), v.end());
  f.high = *std::max_element(v.begin(), v.end());
}

// The clock to count cycles at: the measured one where the clock probe read
// it with some confidence, else the driver's figure.
struct Clock {
  double mhz = 0;
  double confidence = 0;  // how far a cycle count at this clock can be trusted, as a factor
  std::string basis;
};
Clock cycle_clock(const Results& r, const std::vector<Finding>& found) {
  for (const auto& f : found)
    if (f.id == "device.measured_clock_mhz" && f.confidence >= kPassOnConfidence && number(f) > 0)
      return {number(f), f.confidence, fmt::format("the clock probe's measured {:.0f} MHz", number(f))};
  if (r.device.clock_mhz > 0)
    return {static_cast<double>(r.device.clock_mhz), 0.6,
            fmt::format("the reported {} MHz (the clock under load was not measured; too high a count if the "
                        "device ran slower)",
                        r.device.clock_mhz)};
  return {};
}

}  // namespace

std::vector<Finding> matrix_findings(const Results& r, const std::vector<Finding>& found) {
  std::vector<Finding> out;
  const Clock clock = cycle_clock(r, found);
  const double cus = r.device.compute_units;
  std::vector<Finding> rates;
  for (const auto& s : r.series) {
    const std::string tag = shape_tag(s, "throughput");
    const Point* best = tag.empty() ? nullptr : best_point(s);
    if (!best) continue;
    Finding f;
    f.id = "compute.matrix." + tag + ".throughput_gops";
    f.value = best->y;
    f.unit = "Gop/s";
    f.confidence = spread_confidence(*best);
    f.evidence = {s.id};
    f.method =
        "median rate of the best accumulator count, independent multiply-accumulate chains in every subgroup, "
        "every compute unit filled; an op is one multiply-add (m x n x k per D = A x B + C)";
    bounds(f, best->samples);
    f.note = fmt::format("{:.1f} T(FL)OP/s counting 2 per multiply-add; best with {:g} accumulators per subgroup",
                         best->y * 2 / 1000, best->x);
    for (const auto& p : s.points)
      if (&p != best) f.note += fmt::format("; {:g}: {:.0f} Gop/s", p.x, p.y);
    if (const double per_clk = ops_per_clock_per_cu(best->y, cus, clock.mhz); per_clk > 0)
      f.note += fmt::format("; {:.0f} multiply-adds per clock per compute unit at {:.0f} MHz", per_clk, clock.mhz);
    rates.push_back(f);
  }
  out.insert(out.end(), rates.begin(), rates.end());

  for (const auto& s : r.series) {
    const std::string tag = shape_tag(s, "latency");
    if (tag.empty() || s.points.empty() || s.points.front().samples.empty()) continue;
    const Point& p = s.points.front();
    const std::string base = "compute.matrix." + tag;
    Finding ns;
    ns.id = base + ".latency_ns";
    ns.value = p.y;
    ns.unit = "ns";
    ns.confidence = spread_confidence(p);
    ns.evidence = {s.id};
    ns.method = "one subgroup, one accumulator, each multiply-accumulate taking the last one's result as C; median "
                "time per multiply-accumulate over timed launches";
    bounds(ns, p.samples);
    out.push_back(ns);
    if (clock.mhz <= 0) {
      note_unfound(base + ".latency_cycles", "neither a measured nor a reported clock to count cycles at", {s.id});
      continue;
    }
    Finding cyc;
    cyc.id = base + ".latency_cycles";
    cyc.value = cycles_from_ns(p.y, clock.mhz);
    cyc.unit = "cycles";
    cyc.confidence = ns.confidence * clock.confidence;
    cyc.evidence = {s.id};
    cyc.method = "latency in ns times the clock";
    cyc.low = cycles_from_ns(*ns.low, clock.mhz);
    cyc.high = cycles_from_ns(*ns.high, clock.mhz);
    cyc.note = "at " + clock.basis;
    out.push_back(cyc);
  }

  if (rates.empty()) return out;
  const Finding& peak = *std::max_element(
      rates.begin(), rates.end(), [](const Finding& a, const Finding& b) { return number(a) < number(b); });
  const Series* peak_series = r.find_series(peak.evidence.front());
  const Series* fma = r.find_series("compute.fp32.fma");
  const Point* fma_best = fma ? best_point(*fma) : nullptr;
  if (!fma_best || !(fma_best->y > 0)) {
    note_unfound("compute.matrix.peak_vs_fp32_fma",
                 "no compute.fp32.fma series in the results (the compute probe was not run, or not its fp32 fma)",
                 {peak_series->id});
    return out;
  }
  Finding f;
  f.id = "compute.matrix.peak_vs_fp32_fma";
  f.value = number(peak) / fma_best->y;
  f.unit = "";
  f.confidence = std::min(peak.confidence, spread_confidence(*fma_best));
  f.evidence = {peak_series->id, fma->id};
  f.method =
      "the fastest listed matrix shape's multiply-adds per second over FP32 FMAs per second (best forms of "
      "each), both counting one multiply-add as one op";
  // Sample extremes of both, the ratio's widest reading.
  const Point* pb = best_point(*peak_series);
  f.low = *std::min_element(pb->samples.begin(), pb->samples.end()) /
          *std::max_element(fma_best->samples.begin(), fma_best->samples.end());
  f.high = *std::max_element(pb->samples.begin(), pb->samples.end()) /
           *std::min_element(fma_best->samples.begin(), fma_best->samples.end());
  f.note = fmt::format("{} at {:.4g} Gop/s against FP32 FMA at {:.4g} Gop/s", peak.id, number(peak), fma_best->y);
  out.push_back(f);
  return out;
}

}  // namespace gpuscope::analysis
