// Rule line-revisit-refit (docs/inference.md 3.3): a chase whose slots
// share lines never settles on its plateaus; the whole curve is fitted to
// the line-revisit model at once.
#include "analysis/staircase.hpp"
#include "analysis/staircase_tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::analysis::staircase {

namespace {

// Latencies of the model y(F) = sum_j L_j (min(F, C_j) - min(F, C_j-1)) / F
// + L_next (1 - min(F, C_m) / F) (line revisits: a level of capacity C_j
// holds the fraction C_j / F of a footprint F past it) for given C,
// by least squares in relative error (linear in the L); the sum of squared
// relative residuals, or infinity when the system is singular.
double revisit_latencies(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& caps,
                         std::vector<double>& lat) {
  const size_t m = caps.size(), k = m + 1;
  std::vector<double> a(k * k, 0.0), b(k, 0.0), w(k);
  const auto weights = [&](double f) {
    double prev = 0;
    for (size_t j = 0; j < m; ++j) {
      const double held = std::min(f, caps[j]);
      w[j] = (held - prev) / f;
      prev = held;
    }
    w[m] = 1 - prev / f;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    weights(x[i]);
    const double s = 1 / (y[i] * y[i]);
    for (size_t r = 0; r < k; ++r) {
      b[r] += s * w[r] * y[i];
      for (size_t q = 0; q < k; ++q) a[r * k + q] += s * w[r] * w[q];
    }
  }
  // Gaussian elimination with partial pivoting (k <= 8).
  for (size_t col = 0; col < k; ++col) {
    size_t piv = col;
    for (size_t r = col + 1; r < k; ++r)
      if (std::abs(a[r * k + col]) > std::abs(a[piv * k + col])) piv = r;
    if (std::abs(a[piv * k + col]) < 1e-12) return std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < k; ++q) std::swap(a[col * k + q], a[piv * k + q]);
    std::swap(b[col], b[piv]);
    for (size_t r = col + 1; r < k; ++r) {
      const double f = a[r * k + col] / a[col * k + col];
      for (size_t q = col; q < k; ++q) a[r * k + q] -= f * a[col * k + q];
      b[r] -= f * b[col];
    }
  }
  lat.assign(k, 0.0);
  for (size_t r = k; r-- > 0;) {
    double v = b[r];
    for (size_t q = r + 1; q < k; ++q) v -= a[r * k + q] * lat[q];
    lat[r] = v / a[r * k + r];
  }
  double sse = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    weights(x[i]);
    double model = 0;
    for (size_t j = 0; j < k; ++j) model += w[j] * lat[j];
    sse += std::pow((model - y[i]) / y[i], 2);
  }
  return sse;
}

}  // namespace

// A chase whose slots share lines (the texture probe's 2D path) never
// settles on its plateaus: every level keeps the share C / F of a footprint
// past it, so each plateau is pulled towards the level before it and each
// rise runs on for octaves. The whole curve is fitted to the line-revisit
// model at once: capacities by coordinate search (each within half to twice
// its staircase reading), latencies by least squares. Kept when the fit's
// rms error is within kRevisitKeepRms (a sampler that keeps a line's texels together
// rises sharply, as the H200's 2D path does, and keeps its staircase).
void refine_line_revisits(const Curve& c, Hierarchy& h) {
  std::vector<CacheLevel*> caches;
  for (CacheLevel& l : h.levels)
    if (l.end_reached && l.capacity_bytes > 0) caches.push_back(&l);
  CacheLevel* next = h.dram ? &*h.dram : (!h.levels.empty() && !h.levels.back().end_reached ? &h.levels.back() : nullptr);
  if (caches.empty() || next == nullptr || caches.back() == next) return;
  std::vector<double> x, y;
  for (size_t i = 0; i < c.size(); ++i)
    if (c.x[i] >= h.levels.front().first_x && c.x[i] <= next->last_x) {
      x.push_back(c.x[i]);
      y.push_back(std::exp(c.v[i]));
    }
  const size_t m = caches.size();
  if (static_cast<double>(x.size()) < 2.0 * static_cast<double>(m + 1) + kRevisitExtraPoints) return;
  std::vector<double> caps, start, lat;
  for (const CacheLevel* l : caches) caps.push_back(l->capacity_bytes);
  start = caps;
  double best = revisit_latencies(x, y, caps, lat);
  for (int sweep = 0; sweep < kRevisitSweeps; ++sweep)
    for (size_t j = 0; j < m; ++j) {
      const double lo = std::max(start[j] / kRevisitSearchSpan, j > 0 ? caps[j - 1] * kRevisitCapacityGap : 0.0);
      const double hi = std::min(kRevisitSearchSpan * start[j],
                                 j + 1 < m ? caps[j + 1] / kRevisitCapacityGap : kRevisitSearchSpan * start[j]);
      if (!(hi > lo)) continue;
      double keep = caps[j];
      const int steps = static_cast<int>(kRevisitSearchSteps.value);
      for (int i = 0; i <= steps; ++i) {
        caps[j] = std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / steps);
        std::vector<double> l;
        const double e = revisit_latencies(x, y, caps, l);
        if (e < best) best = e, keep = caps[j];
      }
      caps[j] = keep;
    }
  const double rms = std::sqrt(revisit_latencies(x, y, caps, lat) / static_cast<double>(x.size()));
  if (!(rms <= kRevisitKeepRms)) {
    h.notes.push_back(fmt::format(
        "The line-revisit model fitted to the whole curve leaves {:.1f}% rms: the staircase reading is kept.",
        100 * rms));
    return;
  }
  const std::string note = fmt::format(
      "Several slots share each line (every pixel a slot), so a level keeps the share C/F of any larger "
      "footprint and its plateau never settles: capacity and latency come from fitting the whole curve with "
      "that model ({:.1f}% rms), not from the plateau.",
      100 * rms);
  for (size_t j = 0; j < m; ++j) {
    CacheLevel& l = *caches[j];
    l.capacity_bytes = caps[j];
    l.capacity_low = std::min(l.capacity_low, caps[j]);
    l.capacity_high = std::max(l.capacity_high, caps[j]);
    l.latency_ns = lat[j];
    l.latency_low = std::min(l.latency_low, lat[j]);
    l.latency_high = std::max(l.latency_high, lat[j]);
    l.note = l.note.empty() ? note : l.note + " " + note;
  }
  next->latency_ns = lat[m];
  next->latency_low = std::min(next->latency_low, lat[m]);
  next->latency_high = std::max(next->latency_high, lat[m]);
}

}  // namespace gpuscope::analysis::staircase
