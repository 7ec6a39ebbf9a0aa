// read_tlb_curve (analysis/tlb.hpp): one strided chase against the control,
// read as steps of translation time. tlb.cpp turns the curves into findings.
#include "analysis/tlb.hpp"

#include "analysis/segmentation.hpp"
#include "analysis/tlb_shape.hpp"
#include "analysis/tlb_tuning.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

namespace gpuscope::analysis {

using namespace tlb;

namespace {

// Control latency at `slots`, interpolated linearly in log(slots); nullopt
// outside the control's range, and also where the control is changing
// level (a neighbour more than kControlJump away in log): there a cache is overflowing, and
// how far it has overflowed depends on how the slots fall on its sets, which
// the strided layout does differently from the control's consecutive lines.
// On the H200 the L1's overflow (1024-4096 slots) made a 2 MiB-strided chase
// 20 ns slower than the control while the latency probe saw no TLB cost at
// all up to 2 GiB: a set effect, not translation.
std::optional<double> control_at(const Series& control, double slots) {
  const auto& pts = control.points;
  if (pts.empty() || slots < pts.front().x * 0.99 || slots > pts.back().x * 1.01) return std::nullopt;
  const auto steady = [&](size_t i) {
    const auto jump = [&](size_t a, size_t b) { return std::abs(std::log(pts[b].y / pts[a].y)) > kControlJump; };
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

double noise_ns(const Point& p) {
  const double own = p.samples.size() >= 3 ? mad_sigma(p.samples) : 0;
  return std::max({own, k_min_relative_noise * p.y, kNoiseFloorNs.value});
}

// The cache level strided point i stands on where the control reaches it
// only at larger slot counts, or nullopt: three or more consecutive control
// points past its slots, each within `tolerance` of its latency and within
// kPlateauSpread of one another (a plateau, not a gradual rise passing through),
// clearly above `below`, the control at its slots. The strided lines, one
// per block, crowd fewer cache sets than the control's consecutive ones, so
// a cache can overflow for them long before it does for the control; the
// difference is then the gap between two cache levels, not translation (a
// drawn GPU whose 48 KiB 8-way L1 overflowed at 181 slots of a 64 KiB
// stride read that 86.6 ns gap as a TLB level at 8 MiB, and the true 48 MiB
// reach as a second level). A TLB miss whose penalty happens to equal the
// gap looks the same, but it stays: where the strided chase is measured on
// the control's plateau too and stands above it there, it is not a cache's
// gap (a 256-entry TLB missing at 124 ns over a 60 ns L1, the L2 at 187).
// Where the strided chase is not measured there, or leaves the level
// before, the level is taken as a cache's.
std::optional<double> later_control_level(const Series& control, const Series& strided, double stride,
                                          size_t i, double below, double tolerance) {
  const double slots = std::round(strided.points[i].x / stride), y = strided.points[i].y;
  if (y - below <= std::max(tolerance, kMinRelativeRise * below)) return std::nullopt;
  const auto& pts = control.points;
  for (size_t first = 0; first + 2 < pts.size(); ++first) {
    if (pts[first].x <= slots * 1.01) continue;
    double lo = y, hi = y, sum = 0;
    size_t end = first;
    for (; end < pts.size() && std::abs(pts[end].y - y) <= tolerance; ++end) {
      if (end >= first + kPlateauPoints && std::max(hi, pts[end].y) - std::min(lo, pts[end].y) > kPlateauSpread * y)
        break;
      lo = std::min(lo, pts[end].y);
      hi = std::max(hi, pts[end].y);
      sum += pts[end].y;
    }
    if (end < first + kPlateauPoints || hi - lo > kPlateauSpread * y) continue;
    const double level = sum / static_cast<double>(end - first);
    // Asked of the first strided point measured where the control stands on
    // the plateau, and only where the strided chase stays on the level up
    // to there: a step it takes before then may be a TLB level running out,
    // which stays.
    for (size_t j = i + 1; j < strided.points.size(); ++j) {
      const Point& q = strided.points[j];
      const double n = std::round(q.x / stride);
      if (n < pts[first].x * 0.99) {
        if (std::abs(q.y - y) > tolerance) return level;
        continue;
      }
      const auto cq = n <= pts[end - 1].x * 1.01 ? control_at(control, n) : std::nullopt;
      if (cq) return q.y - *cq <= kClearSigmas * noise_ns(q) ? std::optional(level) : std::nullopt;
    }
    return level;
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

// A strided point inside `st`'s bracket that was left out because the
// control changes level at its slots (one of its caches overflowing;
// `baseline` is then empty there) still bounds its own excess from below,
// by the highest control point within a factor of two of those slots.
// Where that bound is over half the step's rise, the point is past the
// reach and closes the bracket there (a 384-entry TLB of 4 KiB pages, 1.5
// MiB: its 2 MiB point, 186 ns above any control level around 512 slots,
// had been dropped, so the bracket ran to 4 MiB and the power of two in
// it, 2 MiB, was read). Inside the control's range only: past its end the
// control may climb further than any point it has.
void close_bracket_past_the_step(TlbStep& st, const Series& strided, double stride,
                                 const std::vector<std::optional<double>>& baseline, const Series& control) {
  const auto& cp = control.points;
  if (cp.empty()) return;
  for (size_t i = 0; i < strided.points.size(); ++i) {
    const Point& p = strided.points[i];
    if (baseline[i] || !(p.y > 0) || p.x <= st.reach_low || p.x >= st.reach_high) continue;
    const double slots = std::round(p.x / stride);
    if (slots < cp.front().x || slots > cp.back().x) continue;
    double ceiling = 0;
    for (const auto& q : cp)
      if (q.x >= slots / 2 && q.x <= slots * 2) ceiling = std::max(ceiling, q.y);
    if (ceiling > 0 && p.y - ceiling > kBracketShareOfStep * st.penalty_ns) {
      st.reach_high = p.x;
      st.reach_bytes = reach_in(st.reach_low, st.reach_high);
      return;
    }
  }
}

// Per strided point: the control at its slots (nullopt: none to subtract),
// and whether the point is left out.
struct Baseline {
  std::vector<std::optional<double>> control;
  std::vector<bool> left_out;
};

// Rules below-the-control-is-no-baseline and cache-gap-is-not-translation.
// Points where the strided chase stands on a cache level the control
// reaches only later (later_control_level), and those on the way up to one
// (rising towards it from above the control, just before it or between two
// such points), say nothing of translation and are left out. Past such a
// point the strided lines stay in that level or beyond (more of them crowd
// the same sets), so later points are measured from it where the control
// is still below it.
Baseline match_control(const Series& strided, const Series& control, double stride) {
  const auto& pts = strided.points;
  Baseline b{std::vector<std::optional<double>>(pts.size()), std::vector<bool>(pts.size(), false)};
  auto& cys = b.control;
  auto& out = b.left_out;
  double floor_ns = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    const double slots = std::round(pts[i].x / stride);
    cys[i] = control_at(control, slots);
    if (!cys[i] || !(pts[i].y > 0)) continue;
    cys[i] = std::max(*cys[i], floor_ns);
    // Translation only adds. A strided point clearly below the control at
    // its slots says the control pays for a cache the strided lines do not
    // (a level overflowing for consecutive lines first: an exclusive L2
    // swapping with its L1 put the control up to 27 ns above the strided
    // lines' L2 hits over three octaves), so it is no baseline there.
    if (*cys[i] - pts[i].y > kClearSigmas * std::hypot(noise_ns(pts[i]), k_min_relative_noise * *cys[i])) {
      out[i] = true;
      continue;
    }
    // The point's own scatter, at least kOwnScatterShareOfFloor of the
    // noise floor: the floor of noise_ns would take a TLB step 3% off a
    // later cache level for noise.
    const double own = pts[i].samples.size() >= 3 ? mad_sigma(pts[i].samples) : 0;
    const double tolerance = kClearSigmas * std::max(own, kOwnScatterShareOfFloor * k_min_relative_noise * pts[i].y);
    const auto level = later_control_level(control, strided, stride, i, *cys[i], tolerance);
    if (!level) continue;
    out[i] = true;
    floor_ns = std::max(floor_ns, *level);
    double above = pts[i].y + tolerance;  // the walk's next point up
    for (size_t j = i; j-- > 0 && !out[j];) {
      if (!cys[j]) continue;
      const double sj = kClearSigmas * noise_ns(pts[j]);
      if (!(pts[j].y > *cys[j] + sj && pts[j].y < above - sj)) break;
      out[j] = true;
      above = pts[j].y;
    }
  }
  return b;
}

// A step found by segmentation, with what taking it back or fitting its
// shape needs.
struct Found {
  TlbStep step;
  double below = 0;  // the level the step rose from
  size_t seg_first = 0, seg_last = 0;
  size_t below_first = 0;  // where the level it rose from began
};

// The control's own footprint at point i: its slots are consecutive
// lines, so once they span more than a TLB level's reach the control
// misses it too (as 1 - R/F of its loads) and the difference falls back
// towards zero; that fall is not the step being taken back, and the
// points past it say nothing of the step's shape.
double control_bytes(const TlbCurve& c, double line, size_t i) { return c.footprint[i] / c.stride_bytes * line; }

// Rules step-is-a-tlb-level and step-taken-back. Walk the segments,
// keeping the level the curve stands on; a segment of two or more points
// (or the last one) that stands clearly above it is a new TLB level.
// Single-point excursions and falls (the control's own scatter, a
// disturbed sample) do not move the level. A run of two or more points
// that falls back to the level below the last step takes that step back:
// translation misses never go away as the footprint grows, so the step was
// the caches' (the strided lines sharing sets the control's consecutive
// lines do not), not a TLB level. Sets c.base_ns.
std::vector<Found> find_steps(TlbCurve& c, const std::vector<double>& sigma, double line) {
  const auto segs = segment_piecewise_constant(c.excess_ns, sigma, change_point_penalty(c.excess_ns.size()));
  std::vector<Found> found;
  double level = segs.front().level;
  size_t level_first = segs.front().first;
  size_t level_last = segs.front().last;
  c.base_ns = level;
  for (size_t k = 1; k < segs.size(); ++k) {
    const Segment& s = segs[k];
    const bool last = k + 1 == segs.size();
    // A typical point's noise on the segment: the median, so that one
    // disturbed point (a PoCL chase's 13 ns scatter at 256 MiB beside 0.3
    // ns elsewhere) does not hide a step every other point shows.
    const double point_sigma = median(std::span(sigma).subspan(s.first, s.size()));
    double mean_ctrl = 0;
    for (size_t i = s.first; i <= s.last; ++i) mean_ctrl += c.control_ns[i];
    mean_ctrl /= static_cast<double>(s.size());
    const double rise = s.level - level;
    if ((s.size() >= 2 || last) && rise > kStepSigmas * point_sigma && rise > kMinRelativeRise * mean_ctrl) {
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
      found.push_back({st, level, s.first, s.last, level_first});
      level = s.level;
      level_first = s.first;
      level_last = s.last;
    } else if (s.size() >= 2 && !found.empty() && control_bytes(c, line, s.first) < found.back().step.reach_low &&
               s.level - found.back().below <=
                   std::max(kStepSigmas * point_sigma, kFallShareOfStep * (level - found.back().below))) {
      level = found.back().below;
      level_first = found.back().below_first;
      level_last = s.last;
      found.pop_back();
    } else if (s.size() >= 2 && std::abs(rise) <= kStepSigmas * point_sigma) {
      level_last = s.last;  // the same level continues
    }
  }
  return found;
}

// Rules rise-shape-reads-reach and whole-penalty. Each step's reach from
// the shape of its rise (fit_tlb_shape): the window runs from where the
// level below began to the step's end, and on through later steps while
// one shape still fits them all (a gradual rise that segmentation cut into
// several steps is one level), stopping where the curve falls (the
// control's caches overflowing at the largest counts). A sharp rise keeps
// the segmentation's bracket; a rise no shape fits (chi2 over
// kShapeChi2PerDof per degree of freedom) keeps the segmentation's reading.
// The window also stops where the control's own footprint reaches
// `reach_low`, the least the level's reach can be: the segmentation's
// bracket first, then, where the fit puts the reach further (points left
// out before the rise make the bracket loose), the fit's, once.
void fit_step_shapes(const TlbCurve& c, const std::vector<double>& sigma, double line, std::vector<Found>& found) {
  const auto window_end = [&](size_t m, double reach_low) {
    size_t end = m + 1 < found.size() ? found[m + 1].seg_first - 1 : c.excess_ns.size() - 1;
    double top = c.excess_ns[found[m].seg_first];
    for (size_t i = found[m].seg_first; i <= end; ++i) {
      if (control_bytes(c, line, i) >= std::max(reach_low, found[m].step.reach_low) ||
          c.excess_ns[i] < top - kStepSigmas * sigma[i] - kFallShareOfStep * (top - found[m].below))
        return i - 1;
      top = std::max(top, c.excess_ns[i]);
    }
    return end;
  };
  for (size_t j = 0; j < found.size(); ++j) {
    // The fit over the widest window one shape still fits, and the step
    // that window ends at.
    struct WindowFit {
      std::optional<TlbShapeFit> fit;
      size_t merged_to = 0;
    };
    const auto fit_windows = [&](double reach_low) {
      WindowFit w{std::nullopt, j};
      for (size_t m = j; m < found.size(); ++m) {
        const size_t first = found[j].below_first, last = window_end(m, reach_low);
        const auto f = fit_tlb_shape(c, sigma, found[j].below, first, last);
        if (!f) continue;
        const double dof = static_cast<double>(last - first + 1) - f->parameters();
        if (dof <= 0 || f->chi2 > kShapeChi2PerDof * dof) {
          if (m == j) break;
          continue;
        }
        w = {f, m};
      }
      return w;
    };
    WindowFit w = fit_windows(found[j].step.reach_low);
    if (w.fit && w.fit->shape != TlbShape::kSharp && w.fit->reach_low > found[j].step.reach_low)
      if (WindowFit wider = fit_windows(w.fit->reach_low); wider.fit) w = wider;
    const std::optional<TlbShapeFit>& chosen = w.fit;
    const size_t merged_to = w.merged_to;
    if (!chosen) continue;
    TlbStep& st = found[j].step;
    if (merged_to > j) {
      found[j].seg_last = found[merged_to].seg_last;
      st.points = static_cast<int>(found[merged_to].seg_last - found[j].seg_first + 1);
      st.penalty_high = std::max(st.penalty_high, found[merged_to].step.penalty_high +
                                                      found[merged_to].below - found[j].below);
      found.erase(found.begin() + static_cast<long>(j) + 1, found.begin() + static_cast<long>(merged_to) + 1);
    }
    st.shape = chosen->describe();
    st.one_load_per_page = chosen->shape != TlbShape::kRevisits && chosen->shape != TlbShape::kFewRevisits;
    st.sharp = chosen->shape == TlbShape::kSharp;
    if (st.sharp) {
      // One point past the rise fits every shape, and cannot show its top.
      st.penalty_whole = st.points >= 2;
      continue;
    }
    st.reach_bytes = chosen->reach;
    st.reach_low = std::min(chosen->reach_low, chosen->reach);
    st.reach_high = std::max(chosen->reach_high, chosen->reach);
    // The penalty is the shape's height where every hop misses: read from
    // the fit only where the window reaches kWholeSaturation of it; short
    // of that it would be an extrapolation, and the rise seen stays the
    // reading.
    if (chosen->saturation >= kWholeSaturation) {
      st.penalty_whole = true;
      st.penalty_ns = chosen->penalty;
      st.penalty_low = chosen->penalty - kPenaltySigmas * chosen->penalty_sigma;
      st.penalty_high = chosen->penalty + kPenaltySigmas * chosen->penalty_sigma;
    }
  }
}

}  // namespace

TlbCurve read_tlb_curve(const Series& strided, const Series& control) {
  TlbCurve c;
  c.stride_bytes = strided.meta.contains("stride_bytes") ? strided.meta["stride_bytes"].get<double>() : 0;
  if (c.stride_bytes <= 0) return c;
  const Baseline baseline = match_control(strided, control, c.stride_bytes);
  const auto& pts = strided.points;
  std::vector<double> sigma;
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::optional<double>& cy = baseline.control[i];
    if (!cy || !(pts[i].y > 0) || baseline.left_out[i]) continue;
    c.footprint.push_back(pts[i].x);
    c.excess_ns.push_back(pts[i].y - *cy);
    c.control_ns.push_back(*cy);
    // The control's own scatter adds to the difference's.
    sigma.push_back(std::hypot(noise_ns(pts[i]), k_min_relative_noise * *cy));
  }
  if (c.excess_ns.size() < 3) return c;

  const double line = strided.meta.contains("line_bytes") ? strided.meta["line_bytes"].get<double>() : 64;
  std::vector<Found> found = find_steps(c, sigma, line);
  for (Found& f : found) close_bracket_past_the_step(f.step, strided, c.stride_bytes, baseline.control, control);
  fit_step_shapes(c, sigma, line, found);
  for (const Found& f : found) c.steps.push_back(f.step);
  return c;
}

}  // namespace gpuscope::analysis
