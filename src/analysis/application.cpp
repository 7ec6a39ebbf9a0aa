#include "analysis/application.hpp"

#include "analysis/confidence_factors.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuscope::analysis {
namespace {

// The largest box's rate over the one before it above which the rate is
// still rising with the box (LBM's boxes grow 1.5x to 2x a side).
constexpr double kLevelledRise = 1.25;


Finding make(const std::string& id, FindingValue value, const std::string& unit, double confidence,
             std::vector<std::string> evidence, std::string method) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.confidence = confidence;
  f.evidence = std::move(evidence);
  f.method = std::move(method);
  return f;
}

// Largest capacity among the cache levels found, 0 when none.
double largest_cache_bytes(const std::vector<Finding>& found) {
  double largest = 0;
  for (const auto& f : found)
    if (f.id.rfind("memory.L", 0) == 0 && f.id.size() > 16 &&
        f.id.compare(f.id.size() - 15, 15, ".capacity_bytes") == 0 && f.confidence >= kPassOnConfidence)
      largest = std::max(largest, number(f));
  return largest;
}

// One LBM mode's run: its series, its rate on the largest box and what
// that moves.
struct LbmMode {
  std::string name;
  const Series* s;
  double mlups, gbps;
};

// The verdict: bandwidth-bound where the effective bandwidth reaches
// kBandwidthBoundFraction of the measured DRAM rate (or, without one, 0.8
// of the best mode's), held only where the rate has levelled off with the
// box.
Finding bound_finding(const LbmMode& m, const std::vector<LbmMode>& modes, const Finding* dram, double best_gbps,
                      double conf, std::vector<Finding>& out) {
  const Series& s = *m.s;
  const Point& p = s.points.back();
  const std::string base = "app.lbm." + m.name;
  const double edge = std::cbrt(p.x);
  double fraction = 0;
  Finding bound = make(base + ".bound", true, "", 0.5, {s.id}, "");
  if (dram != nullptr) {
    fraction = m.gbps / number(*dram);
    Finding frac =
        make(base + ".fraction_of_dram", fraction, "", std::min(conf, dram->confidence), {s.id},
             fmt::format("effective GB/s over {} ({:.0f} GB/s, this run)", dram->id, number(*dram)));
    frac.evidence.insert(frac.evidence.end(), dram->evidence.begin(), dram->evidence.end());
    out.push_back(frac);
    const bool bw = fraction >= kBandwidthBoundFraction;
    bound.value = bw;
    bound.confidence = std::clamp(0.5 + std::abs(fraction - kBandwidthBoundFraction), 0.5, 0.95) *
                       std::min(1.0, dram->confidence + 0.1);
    bound.evidence = frac.evidence;
    bound.method = fmt::format(
        "bandwidth-bound (true) when the effective bandwidth reaches {:g} of the "
        "measured DRAM rate, else compute-bound (false)",
        kBandwidthBoundFraction);
    bound.note = fmt::format("{}: {:.0f}% of the measured DRAM rate.",
                             bw ? "bandwidth-bound" : "compute-bound", 100 * fraction);
  } else {
    // No DRAM rate in this run: the modes against each other. The best
    // mode's effective bandwidth stands in for the memory's.
    fraction = best_gbps > 0 ? m.gbps / best_gbps : 0;
    const bool bw = fraction >= 0.8;
    bound.value = bw;
    bound.confidence = modes.size() >= 2 ? 0.4 : 0.2;
    bound.method =
        "without a DRAM rate in this run: bandwidth-bound (true) when the mode's effective "
        "bandwidth reaches 0.8 of the best mode's";
    bound.note = fmt::format(
        "{:.0f}% of the best mode's effective bandwidth; run the bandwidth probe too "
        "for a verdict against the memory.",
        100 * fraction);
  }
  if (m.name != "fp32")
    for (const auto& other : modes)
      if (other.name == "fp32" && other.mlups > 0)
        bound.note += fmt::format(" {:.2f}x FP32's MLUP/s with half its bytes.", m.mlups / other.mlups);
  // A verdict holds only where the rate has levelled off with the box: a
  // box whose rate is still rising steeply is too small to load the
  // memory (launches and the grid's edges weigh), and says neither.
  if (s.points.size() < 2 || p.y > kLevelledRise * s.points[s.points.size() - 2].y) {
    bound.confidence = std::min(bound.confidence, 0.3);
    bound.note += s.points.size() < 2
                      ? fmt::format(" Only the {:.0f}^3 box was measured: whether its rate has levelled off "
                                    "with the box is not known.",
                                    edge)
                      : fmt::format(" The rate was still rising with the box ({:.2f}x the one before): the "
                                    "largest box measured may be too small to load the memory.",
                                    p.y / s.points[s.points.size() - 2].y);
  }
  return bound;
}

// The shear-wave check's viscosity and mass errors, where the run has them.
void physics_findings(const Series& s, const std::string& base, std::vector<Finding>& out) {
  if (!s.meta.contains("physics")) return;
  const auto& ph = s.meta["physics"];
  Finding nu = make(base + ".viscosity_rel_error", ph.value("nu_rel_error", 0.0), "", 1.0, {s.id},
                    "decay rate of a shear wave between two times, over nu k^2 with nu = (tau - 1/2)/3");
  nu.note = fmt::format("{} ; measured viscosity {:.5f}, analytic {:.5f}.", ph.value("flow", std::string()),
                        ph.value("nu_measured", 0.0), ph.value("nu_analytic", 0.0));
  out.push_back(nu);
  out.push_back(make(base + ".mass_rel_error", ph.value("mass_rel_error", 0.0), "", 1.0, {s.id},
                     "total mass after the shear wave's steps over the start's, minus 1, summed on the host"));
}

// MLUP/s and effective bandwidth on the largest box; returns their confidence.
double rate_findings(const LbmMode& m, double cache_bytes, std::vector<Finding>& out) {
  const Series& s = *m.s;
  const Point& p = s.points.back();
  const double bytes = s.meta["bytes_per_cell_update"].get<double>();
  const std::string base = "app.lbm." + m.name;
  const double edge = std::cbrt(p.x);
  const double footprint = p.x * bytes;  // both buffers and the flags
  // A box whose buffers are not well past the largest cache may be served
  // partly from it: then the rate is not DRAM's.
  const bool past_caches = cache_bytes <= 0 || footprint >= 4 * cache_bytes;
  const double spread = p.samples.size() >= 2 ? mad_sigma(p.samples) / std::max(p.y, 1e-12) : 1.0;
  const double conf = (spread <= 0.05 ? 0.9 : 0.7) * (past_caches ? 1.0 : 0.7);

  Finding mlups = make(base + ".mlups", p.y, "MLUP/s", conf, {s.id},
                       fmt::format("median lattice updates per second over stretches of consecutive steps "
                                   "on the largest box measured ({:.0f}^3 cells)",
                                   edge));
  if (p.samples.size() >= 2) {
    mlups.low = *std::min_element(p.samples.begin(), p.samples.end());
    mlups.high = *std::max_element(p.samples.begin(), p.samples.end());
  }
  const Point& best = *std::max_element(s.points.begin(), s.points.end(),
                                        [](const Point& a, const Point& b) { return a.y < b.y; });
  mlups.note =
      fmt::format("{:.0f}^3 cells, {:.0f} MiB of populations and flags.", edge, footprint / 1048576);
  if (&best != &p)
    mlups.note += fmt::format(" The fastest box was {:.0f}^3 at {:.0f} MLUP/s.", std::cbrt(best.x), best.y);
  if (!past_caches)
    mlups.note += fmt::format(" The box is under 4x the largest cache found ({:.0f} MiB): partly cached.",
                              cache_bytes / 1048576);
  out.push_back(mlups);

  Finding gbps = make(base + ".effective_gbps", m.gbps, "GB/s", conf, {s.id},
                      fmt::format("MLUP/s x {:g} bytes per cell update (19 populations read and written, "
                                  "{:g} B each, and a flag byte)",
                                  bytes, (bytes - 1) / 38));
  if (mlups.low) gbps.low = *mlups.low * bytes / 1e3;
  if (mlups.high) gbps.high = *mlups.high * bytes / 1e3;
  out.push_back(gbps);

  return conf;
}

}  // namespace

std::vector<Finding> lbm_findings(const Results& r, const std::vector<Finding>& found) {
  std::vector<Finding> out;
  // The DRAM rate an LBM step is held to: copy (it reads and writes equal
  // amounts), else read.
  const Finding* dram = find_finding(found, "memory.dram.copy_gbps");
  if (dram == nullptr || number(*dram) <= 0) dram = find_finding(found, "memory.dram.bandwidth_gbps");
  if (dram != nullptr && (number(*dram) <= 0 || dram->confidence < 0.3)) dram = nullptr;
  const double cache_bytes = largest_cache_bytes(found);
  std::vector<LbmMode> modes;
  for (const char* name : {"fp32", "fp16s", "fp16c"}) {
    const Series* s = r.find_series(std::string("lbm.") + name);
    if (s == nullptr || s->points.empty() || !s->meta.contains("bytes_per_cell_update")) continue;
    const double bytes = s->meta["bytes_per_cell_update"].get<double>();
    modes.push_back({name, s, s->points.back().y, s->points.back().y * bytes / 1e3});
  }
  double best_gbps = 0;
  for (const auto& m : modes) best_gbps = std::max(best_gbps, m.gbps);
  for (const auto& m : modes) {
    const double conf = rate_findings(m, cache_bytes, out);
    out.push_back(bound_finding(m, modes, dram, best_gbps, conf, out));
    physics_findings(*m.s, "app.lbm." + m.name, out);
  }
  return out;
}

namespace {

// Running median of `w` points centred on each point.
std::vector<double> running_median(const Series& s, size_t w) {
  std::vector<double> out;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const size_t lo = i >= w / 2 ? i - w / 2 : 0, hi = std::min(s.points.size(), lo + w);
    std::vector<double> v;
    for (size_t k = lo; k < hi; ++k) v.push_back(s.points[k].y);
    out.push_back(median(v));
  }
  return out;
}

double median_of_range(const Series& s, size_t from, size_t to) {
  std::vector<double> v;
  for (size_t k = from; k < to && k < s.points.size(); ++k) v.push_back(s.points[k].y);
  return v.empty() ? 0 : median(v);
}

}  // namespace

std::vector<Finding> sustain_findings(const Results& r) {
  std::vector<Finding> out;
  const Series* tp = r.find_series("sustain.throughput");
  if (tp == nullptr || tp->points.size() < 5) return out;
  const Series* clk = r.find_series("sustain.clock");
  if (clk != nullptr && clk->points.size() < 5) clk = nullptr;
  const Series* drv = r.find_series("sustain.driver.clock_mhz");
  // The ramp is read from the clock where counters measured it, else from
  // throughput (proportional to the clock for an fma load).
  const Series& ramp_src = clk ? *clk : *tp;
  const double half_launch_s = tp->meta.value("launch_ms_planned", 0.0) * 0.5e-3;
  {
    const auto rm = running_median(ramp_src, 5);
    const double peak = *std::max_element(rm.begin(), rm.end());
    size_t i = 0;
    while (i < ramp_src.points.size() && ramp_src.points[i].y < kClockUpFraction * peak) ++i;
    if (i < ramp_src.points.size()) {
      const double end_s = ramp_src.points[i].x + half_launch_s;
      Finding f =
          make("sustain.ramp_ms", end_s * 1e3, "ms", clk ? 0.8 : 0.6, {ramp_src.id},
               fmt::format("end of the first launch after an idle second that reached {:g} of the load's "
                           "peak {}",
                           kClockUpFraction, clk ? "clock" : "throughput"));
      // The launch before ran below the mark on average, so the clock was
      // below it at that launch's start at the latest.
      f.low = i == 0 ? 0.0 : std::max(0.0, ramp_src.points[i - 1].x - half_launch_s) * 1e3;
      f.high = end_s * 1e3;
      f.note = i == 0
                   ? "The first launch already ran at full clock: the ramp is shorter than one launch."
                   : fmt::format("{} launches before the clock was up; the first ran at {:.0f}% of the peak.",
                                 i, 100 * ramp_src.points.front().y / peak);
      out.push_back(f);
    }
  }
  const size_t n = tp->points.size();
  const auto rm = running_median(*tp, 5);
  const size_t peak_at = static_cast<size_t>(std::max_element(rm.begin(), rm.end()) - rm.begin());
  const double peak = rm[peak_at];
  const double last = median_of_range(*tp, n - std::max<size_t>(1, n / 5), n);
  const double drop = std::max(0.0, 1 - last / peak);
  const double duration_s = tp->points.back().x + half_launch_s;
  {
    Finding f =
        make("sustain.sustained_fraction", last / peak, "", 0.8, {tp->id},
             "median throughput of the load's last fifth over the peak of its 5-launch running median");
    out.push_back(f);
    Finding d = make("sustain.drop_fraction", drop, "", 0.8, {tp->id}, "1 - sustained_fraction, at least 0");
    out.push_back(d);
    const bool throttled = drop >= kThrottleDropFraction;
    Finding t = make(
        "sustain.throttling", throttled, "",
        std::clamp(0.5 + 5 * std::abs(drop - kThrottleDropFraction), 0.5, 0.9), {tp->id},
        fmt::format("throughput at the end of the load at least {:g} below its peak", kThrottleDropFraction));
    t.note =
        fmt::format("{:.1f}% below the peak after {:.1f} s of load{}", 100 * drop, duration_s,
                    throttled ? "." : "; a longer --sustain-s (60 s and more) may still show throttling.");
    out.push_back(t);
    if (throttled) {
      size_t i = peak_at;
      while (i < n && rm[i] > peak * (1 - drop / 2)) ++i;
      if (i < n) {
        Finding o = make("sustain.throttle_onset_s", tp->points[i].x, "s", 0.7, {tp->id},
                         "time at which the running median had fallen half of its total drop");
        out.push_back(o);
      }
    }
  }
  if (clk || drv) {
    const Series& s = clk ? *clk : *drv;
    const size_t m = s.points.size();
    Finding f =
        make("sustain.sustained_clock_mhz", median_of_range(s, m / 2, m), "MHz", clk ? 0.9 : 0.6, {s.id},
             clk ? "median over the load's second half of the kernel's own clock readings: " +
                       s.meta.value("method", std::string("the cycle counter over the timer"))
                 : "median of the driver's reported clock over the load's second half");
    std::vector<double> v;
    for (size_t k = m / 2; k < m; ++k) v.push_back(s.points[k].y);
    f.low = *std::min_element(v.begin(), v.end());
    f.high = *std::max_element(v.begin(), v.end());
    if (clk && drv && !drv->points.empty())
      f.note = fmt::format("The driver reported {:.0f} MHz over the same half.",
                           median_of_range(*drv, drv->points.size() / 2, drv->points.size()));
    out.push_back(f);
  }
  const Series* gap = r.find_series("sustain.gap.clock");
  if (gap == nullptr || gap->points.size() < 2) gap = r.find_series("sustain.gap.throughput");
  if (gap != nullptr && gap->points.size() >= 2 && gap->points.front().x == 0 && gap->points.front().y > 0) {
    const double ref = gap->points.front().y;
    std::optional<double> first_drop;
    double lowest = 1;
    for (const auto& p : gap->points) {
      lowest = std::min(lowest, p.y / ref);
      if (!first_drop && p.y < kGapDropFraction * ref) first_drop = p.x;
    }
    Finding f = make(
        "sustain.dvfs.clock_drops_between_launches", first_drop.has_value(), "", 0.7, {gap->id},
        fmt::format("a launch after an idle gap below {:g} of one launched with no gap", kGapDropFraction));
    f.note = fmt::format("Slowest after a gap: {:.0f}% of the no-gap launch (gaps up to {:g} ms).",
                         100 * lowest, gap->points.back().x);
    out.push_back(f);
    if (first_drop) {
      Finding g = make("sustain.dvfs.drop_after_gap_ms", *first_drop, "ms", 0.6, {gap->id},
                       "shortest idle gap after which the launch ran below that fraction");
      out.push_back(g);
    }
  }
  return out;
}

}  // namespace gpuscope::analysis
