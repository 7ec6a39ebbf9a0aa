#include "analysis/application.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {
namespace {

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

Finding make(const std::string& id, double value, const std::string& unit, double confidence,
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
        f.id.compare(f.id.size() - 15, 15, ".capacity_bytes") == 0 && f.confidence >= 0.5)
      largest = std::max(largest, number(f));
  return largest;
}

}  // namespace

std::vector<Finding> lbm_findings(const Results& r, const std::vector<Finding>& found) {
  std::vector<Finding> out;
  // The DRAM rate an LBM step is held to: copy (it reads and writes equal
  // amounts), else read.
  const Finding* dram = find(found, "memory.dram.copy_gbps");
  if (dram == nullptr || number(*dram) <= 0) dram = find(found, "memory.dram.bandwidth_gbps");
  if (dram != nullptr && (number(*dram) <= 0 || dram->confidence < 0.3)) dram = nullptr;
  const double cache_bytes = largest_cache_bytes(found);

  struct Mode {
    std::string name;
    const Series* s;
    double mlups, gbps;
  };
  std::vector<Mode> modes;
  for (const char* name : {"fp32", "fp16s", "fp16c"}) {
    const Series* s = r.find_series(std::string("lbm.") + name);
    if (s == nullptr || s->points.empty() || !s->meta.contains("bytes_per_cell_update")) continue;
    const double bytes = s->meta["bytes_per_cell_update"].get<double>();
    modes.push_back({name, s, s->points.back().y, s->points.back().y * bytes / 1e3});
  }
  double best_gbps = 0;
  for (const auto& m : modes) best_gbps = std::max(best_gbps, m.gbps);

  for (const auto& m : modes) {
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
    mlups.note = fmt::format("{:.0f}^3 cells, {:.0f} MiB of populations and flags.", edge, footprint / 1048576);
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

    double fraction = 0;
    Finding bound = make(base + ".bound", true, "", 0.5, {s.id}, "");
    if (dram != nullptr) {
      fraction = m.gbps / number(*dram);
      Finding frac = make(base + ".fraction_of_dram", fraction, "", std::min(conf, dram->confidence),
                          {s.id}, fmt::format("effective GB/s over {} ({:.0f} GB/s, this run)", dram->id,
                                              number(*dram)));
      frac.evidence.insert(frac.evidence.end(), dram->evidence.begin(), dram->evidence.end());
      out.push_back(frac);
      const bool bw = fraction >= kBandwidthBoundFraction;
      bound.value = bw;
      bound.confidence = std::clamp(0.5 + std::abs(fraction - kBandwidthBoundFraction), 0.5, 0.95) *
                         std::min(1.0, dram->confidence + 0.1);
      bound.evidence = frac.evidence;
      bound.method = fmt::format("bandwidth-bound (true) when the effective bandwidth reaches {:g} of the "
                                 "measured DRAM rate, else compute-bound (false)",
                                 kBandwidthBoundFraction);
      bound.note = fmt::format("{}: {:.0f}% of the measured DRAM rate.", bw ? "bandwidth-bound" : "compute-bound",
                               100 * fraction);
    } else {
      // No DRAM rate in this run: the modes against each other. The best
      // mode's effective bandwidth stands in for the memory's.
      fraction = best_gbps > 0 ? m.gbps / best_gbps : 0;
      const bool bw = fraction >= 0.8;
      bound.value = bw;
      bound.confidence = modes.size() >= 2 ? 0.4 : 0.2;
      bound.method = "without a DRAM rate in this run: bandwidth-bound (true) when the mode's effective "
                     "bandwidth reaches 0.8 of the best mode's";
      bound.note = fmt::format("{:.0f}% of the best mode's effective bandwidth; run the bandwidth probe too "
                               "for a verdict against the memory.",
                               100 * fraction);
    }
    if (m.name != "fp32")
      for (const auto& other : modes)
        if (other.name == "fp32" && other.mlups > 0)
          bound.note += fmt::format(" {:.2f}x FP32's MLUP/s with half its bytes.", m.mlups / other.mlups);
    out.push_back(bound);

    if (s.meta.contains("physics")) {
      const auto& ph = s.meta["physics"];
      Finding nu = make(base + ".viscosity_rel_error", ph.value("nu_rel_error", 0.0), "", 1.0, {s.id},
                        "decay rate of a shear wave between two times, over nu k^2 with nu = (tau - 1/2)/3");
      nu.note = fmt::format("{} ; measured viscosity {:.5f}, analytic {:.5f}.", ph.value("flow", std::string()),
                            ph.value("nu_measured", 0.0), ph.value("nu_analytic", 0.0));
      out.push_back(nu);
      Finding mass = make(base + ".mass_rel_error", ph.value("mass_rel_error", 0.0), "", 1.0, {s.id},
                          "total mass after the shear wave's steps over the start's, minus 1, summed on the host");
      out.push_back(mass);
    }
  }
  return out;
}

}  // namespace gpuscope::analysis
