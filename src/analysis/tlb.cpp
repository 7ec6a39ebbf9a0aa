#include "analysis/tlb.hpp"

#include "analysis/segmentation.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuscope::analysis {
namespace {

// A rise counts as a TLB level when it is this much of the control's latency
// (and clear of noise): GPU TLB misses cost tens to hundreds of ns against
// 20-300 ns hits, CPU ones several ns against 1-5 ns.
constexpr double kMinRelativeRise = 0.10;

// Control latency at `slots`, interpolated linearly in log(slots); nullopt
// outside the control's range, and also where the control is changing
// level (a neighbour more than 10% away): there a cache is overflowing, and
// how far it has overflowed depends on how the slots fall on its sets, which
// the strided layout does differently from the control's consecutive lines.
// On the H200 the L1's overflow (1024-4096 slots) made a 2 MiB-strided chase
// 20 ns slower than the control while the latency probe saw no TLB cost at
// all up to 2 GiB: a set effect, not translation.
std::optional<double> control_at(const Series& control, double slots) {
  const auto& pts = control.points;
  if (pts.empty() || slots < pts.front().x * 0.99 || slots > pts.back().x * 1.01) return std::nullopt;
  const auto steady = [&](size_t i) {
    const auto jump = [&](size_t a, size_t b) { return std::abs(std::log(pts[b].y / pts[a].y)) > 0.1; };
    return !((i > 0 && jump(i - 1, i)) || (i + 1 < pts.size() && jump(i, i + 1)));
  };
  for (size_t i = 0; i < pts.size(); ++i) {
    if (std::abs(pts[i].x - slots) <= 0.01 * slots) return steady(i) ? std::optional(pts[i].y) : std::nullopt;
    if (i + 1 < pts.size() && pts[i].x < slots && slots < pts[i + 1].x) {
      if (!steady(i) || !steady(i + 1)) return std::nullopt;
      const double t = std::log(slots / pts[i].x) / std::log(pts[i + 1].x / pts[i].x);
      return pts[i].y + t * (pts[i + 1].y - pts[i].y);
    }
  }
  return std::nullopt;
}

// The reach of a level whose step lies between footprints `low` (no
// misses yet) and `high` (on the new level): in [low, high). Entry counts
// and page sizes are powers of two on the GPUs known, so is their product:
// when exactly one power of two lies in the interval it is the reach. An
// LRU TLB makes the step sharp (a cycle over one page more than it holds
// misses on every hop), so the curve says no more than the interval, and
// its geometric middle was up to 19% off at 2 points per octave (41% at
// one). Otherwise the geometric middle.
double reach_in(double low, double high) {
  const double p = std::exp2(std::ceil(std::log2(low * 0.999)));
  if (p < high && p * 2 >= high) return p;
  return std::sqrt(low * high);
}

double noise_ns(const Point& p) {
  const double own = p.samples.size() >= 3 ? mad_sigma(p.samples) : 0;
  return std::max({own, k_min_relative_noise * p.y, 0.05});
}

}  // namespace

TlbCurve read_tlb_curve(const Series& strided, const Series& control) {
  TlbCurve c;
  c.stride_bytes = strided.meta.contains("stride_bytes") ? strided.meta["stride_bytes"].get<double>() : 0;
  if (c.stride_bytes <= 0) return c;
  std::vector<double> sigma, ctrl;
  for (const auto& p : strided.points) {
    const auto cy = control_at(control, std::round(p.x / c.stride_bytes));
    if (!cy || !(p.y > 0)) continue;
    c.footprint.push_back(p.x);
    c.excess_ns.push_back(p.y - *cy);
    ctrl.push_back(*cy);
    // The control's own scatter adds to the difference's.
    sigma.push_back(std::hypot(noise_ns(p), k_min_relative_noise * *cy));
  }
  const size_t n = c.excess_ns.size();
  if (n < 3) return c;

  const auto segs = segment_piecewise_constant(c.excess_ns, sigma, change_point_penalty(n));
  // Walk the segments, keeping the level the curve stands on; a segment of
  // two or more points (or the last one) that stands clearly above it is a
  // new TLB level. Single-point excursions and falls (the control's own
  // scatter, a disturbed sample) do not move the level.
  double level = segs.front().level;
  size_t level_last = segs.front().last;
  c.base_ns = level;
  for (size_t k = 1; k < segs.size(); ++k) {
    const Segment& s = segs[k];
    const bool last = k + 1 == segs.size();
    double mean_sigma = 0, mean_ctrl = 0;
    for (size_t i = s.first; i <= s.last; ++i) {
      mean_sigma += sigma[i];
      mean_ctrl += ctrl[i];
    }
    mean_sigma /= static_cast<double>(s.size());
    mean_ctrl /= static_cast<double>(s.size());
    const double rise = s.level - level;
    if ((s.size() >= 2 || last) && rise > 3 * mean_sigma && rise > kMinRelativeRise * mean_ctrl) {
      TlbStep st;
      st.reach_low = c.footprint[level_last];
      st.reach_high = c.footprint[s.first];
      // Points between the old level's end and this segment (a ramp split
      // off as short segments) widen the interval, never move it.
      st.reach_bytes = reach_in(st.reach_low, st.reach_high);
      st.penalty_ns = rise;
      std::vector<double> on(c.excess_ns.begin() + static_cast<long>(s.first),
                             c.excess_ns.begin() + static_cast<long>(s.last) + 1);
      st.penalty_low = *std::min_element(on.begin(), on.end()) - level;
      st.penalty_high = *std::max_element(on.begin(), on.end()) - level;
      st.points = static_cast<int>(s.size());
      c.steps.push_back(st);
      level = s.level;
      level_last = s.last;
    } else if (s.size() >= 2 && std::abs(rise) <= 3 * mean_sigma) {
      level_last = s.last;  // the same level continues
    }
  }
  return c;
}

std::vector<Finding> tlb_findings(const Series& control, const std::vector<const Series*>& strided) {
  std::vector<Finding> out;
  std::vector<std::pair<const Series*, TlbCurve>> curves;
  for (const Series* s : strided)
    if (s) curves.emplace_back(s, read_tlb_curve(*s, control));
  if (curves.empty()) return out;

  // The earliest first step: strides at or below the page size all put it at
  // entries x page; larger strides put it later (entries x stride).
  const std::pair<const Series*, TlbCurve>* best = nullptr;
  for (const auto& c : curves)
    if (!c.second.steps.empty() &&
        (!best || c.second.steps.front().reach_high < best->second.steps.front().reach_high))
      best = &c;

  std::string summary;
  for (const auto& [s, c] : curves) {
    summary += fmt::format("{}{} B stride: ", summary.empty() ? "" : "; ", c.stride_bytes);
    if (c.steps.empty())
      summary += "no rise up to " +
                 fmt::format("{:.0f} MiB", c.footprint.empty() ? 0.0 : c.footprint.back() / 1048576);
    for (size_t i = 0; i < c.steps.size(); ++i)
      summary += fmt::format("{}+{:.1f} ns from {:.1f} MiB", i ? ", " : "", c.steps[i].penalty_ns,
                             c.steps[i].reach_bytes / 1048576);
  }

  if (!best) {
    // No rise anywhere: the reach is at least the largest footprint swept
    // with the smallest stride.
    double reach = 0;
    const Series* ev = nullptr;
    for (const auto& [s, c] : curves)
      if (!c.footprint.empty() && c.footprint.back() > reach) {
        reach = c.footprint.back();
        ev = s;
      }
    if (ev) {
      Finding f;
      f.id = "memory.tlb.reach_bytes";
      f.value = reach;
      f.unit = "B";
      f.low = reach;
      f.confidence = 0.4;
      f.evidence = {ev->id, control.id};
      f.method =
          "page-strided chase minus a same-size chase within few pages: no rise of the translation "
          "time anywhere on the sweep";
      f.note = "A lower bound: translation stayed cached over the whole sweep (" + summary + ").";
      out.push_back(std::move(f));
    }
    return out;
  }

  const TlbCurve& c = best->second;
  const std::vector<std::string> evidence = {best->first->id, control.id};
  const std::string method = fmt::format(
      "chase with one load per {} B block minus a chase over as many lines within few pages; "
      "steps of the difference by change-point segmentation",
      c.stride_bytes);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const TlbStep& st = c.steps[i];
    const std::string prefix = i == 0 ? "memory.tlb." : fmt::format("memory.tlb.L{}.", i + 1);
    const double conf = st.points >= 3 ? 0.75 : 0.5;
    Finding reach;
    reach.id = prefix + "reach_bytes";
    reach.value = st.reach_bytes;
    reach.unit = "B";
    reach.low = st.reach_low;
    reach.high = st.reach_high;
    reach.confidence = conf;
    reach.evidence = evidence;
    reach.method = method;
    reach.note = fmt::format(
        "{}Translation time per load rises by {:.1f} ns between {:.1f} and {:.1f} MiB of "
        "footprint. All strides: {}.",
        i == 0 ? "First TLB level to run out. " : fmt::format("TLB level {}. ", i + 1), st.penalty_ns,
        st.reach_low / 1048576, st.reach_high / 1048576, summary);
    Finding pen;
    pen.id = prefix + "miss_penalty_ns";
    pen.value = st.penalty_ns;
    pen.unit = "ns";
    pen.low = st.penalty_low;
    pen.high = st.penalty_high;
    pen.confidence = conf;
    pen.evidence = evidence;
    pen.method = method;
    pen.note = i == 0
                   ? "Extra latency of a load whose page misses the first TLB level that runs out (and hits "
                     "the next)."
                   : "Extra latency over the previous TLB level's misses.";
    out.push_back(std::move(reach));
    out.push_back(std::move(pen));
  }

  // Page size: for strides up to the page the first step falls at entries x
  // page; beyond it at entries x stride. A larger stride whose step falls at
  // the same footprint means pages at least that large; one whose step
  // falls r times later means pages of about stride / r.
  for (const auto& [s, other] : curves) {
    if (other.stride_bytes <= c.stride_bytes || other.steps.empty()) continue;
    const double ratio = other.steps.front().reach_bytes / c.steps.front().reach_bytes;
    Finding f;
    f.id = "memory.tlb.page_bytes";
    f.evidence = {best->first->id, s->id};
    f.unit = "B";
    f.method =
        "first TLB step of two strides compared: strides up to the page size run out at the same "
        "footprint, larger ones proportionally later";
    if (ratio < 1.6) {
      f.value = other.stride_bytes;
      f.low = other.stride_bytes;
      f.confidence = 0.6;
      f.note = fmt::format(
          "The {} B and {} B strides run out of TLB at about the same footprint ({:.2f}x): "
          "pages are at least {} B (a lower bound).",
          c.stride_bytes, other.stride_bytes, ratio, other.stride_bytes);
    } else {
      const double page = std::exp2(std::round(std::log2(other.stride_bytes / ratio)));
      f.value = page;
      f.low = std::max(c.stride_bytes, page / 2);
      f.high = std::min(other.stride_bytes, page * 2);
      f.confidence = 0.5;
      f.note = fmt::format(
          "The {} B stride runs out of TLB {:.1f}x later than the {} B stride: pages of about "
          "{} / {:.1f} B.",
          other.stride_bytes, ratio, c.stride_bytes, other.stride_bytes, ratio);
    }
    out.push_back(std::move(f));
    break;
  }
  return out;
}

}  // namespace gpuscope::analysis
