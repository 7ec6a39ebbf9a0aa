#include "analysis/cache_hierarchy.hpp"

#include "analysis/confidence_factors.hpp"
#include "analysis/miss_model.hpp"
#include "analysis/staircase_translation.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::analysis {

namespace {

// The curve as the inference sees it: log latency with noise, isolated
// spikes removed. Indices below refer to these arrays.
struct Curve {
  std::vector<double> x;      // footprint, bytes
  std::vector<double> v;      // ln(latency_ns)
  std::vector<double> sigma;  // noise of v (relative noise of the latency)
  size_t size() const { return x.size(); }
};

// A run of points at one latency level.
struct Plateau {
  std::vector<size_t> points;  // indices into Curve, ascending; may skip points merged across
  double level = 0;            // median of v over `points`
  double sigma = 0;            // median noise of its points
  size_t first() const { return points.front(); }
  size_t last() const { return points.back(); }
};

// Where the curve leaves a plateau.
struct Departure {
  bool seen = false;                     // false: the curve never rose clearly above the plateau
  double at_bytes = 0;                   // the capacity, as the miss model that fits the rise reads it
  double low_bytes = 0, high_bytes = 0;  // last footprint on the plateau, first at the next level
  double near_ns = 0, far_ns = 0;        // the latencies the rise runs between
  MissModel model = MissModel::kSharp;
};

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

double octaves(double from, double to) { return std::log2(to / from); }

// A point alone above (or below) two neighbours that agree with each other is
// a disturbed measurement (an interrupt, a clock change), never a cache level:
// no feature of a staircase is one point wide. It deviates from both
// neighbours in the same direction by more than 4 sigma and by more than twice
// the neighbours' own difference (which keeps points on a steep ramp).
// The first and last points have one neighbour and are never judged spikes;
// the plateau rule ignores them if they stand alone.
Curve without_spikes(const LogCurve& c, int& spikes) {
  Curve out;
  spikes = 0;
  for (size_t i = 0; i < c.x.size(); ++i) {
    if (i > 0 && i + 1 < c.x.size()) {
      const double below = c.log_y[i] - c.log_y[i - 1];
      const double above = c.log_y[i] - c.log_y[i + 1];
      const double deviation = std::min(std::abs(below), std::abs(above));
      const double neighbours_gap = std::abs(c.log_y[i + 1] - c.log_y[i - 1]);
      if (below * above > 0 && deviation > 4 * c.sigma[i] && deviation > 2 * neighbours_gap) {
        ++spikes;
        continue;
      }
    }
    out.x.push_back(c.x[i]);
    out.v.push_back(c.log_y[i]);
    out.sigma.push_back(c.sigma[i]);
  }
  return out;
}

void update_level(Plateau& p, const Curve& c) {
  std::vector<double> v, s;
  for (size_t i : p.points) {
    v.push_back(c.v[i]);
    s.push_back(c.sigma[i]);
  }
  p.level = median(v);
  p.sigma = median(s);
}

// Weighted least-squares line through points first..last of log latency
// against log2 footprint: its slope (log latency per octave) and chi2.
struct LineFit {
  double slope = 0;
  double slope_sigma = 0;  // standard error of the slope from the points' noise
  double chi2 = 0;
  double mean_u = 0, mean_v = 0;  // weighted means of log2 footprint and log latency
  // The line's log latency at footprint x (bytes).
  double at(double x) const { return mean_v + slope * (std::log2(x) - mean_u); }
};

LineFit fit_line(const Curve& c, size_t first, size_t last) {
  double sw = 0, su = 0, sv = 0;
  for (size_t i = first; i <= last; ++i) {
    const double w = 1 / (c.sigma[i] * c.sigma[i]);
    sw += w;
    su += w * std::log2(c.x[i]);
    sv += w * c.v[i];
  }
  double suu = 0, suv = 0;
  for (size_t i = first; i <= last; ++i) {
    const double w = 1 / (c.sigma[i] * c.sigma[i]);
    const double du = std::log2(c.x[i]) - su / sw;
    suu += w * du * du;
    suv += w * du * (c.v[i] - sv / sw);
  }
  LineFit fit;
  fit.slope = suu > 0 ? suv / suu : 0;
  fit.slope_sigma = suu > 0 ? 1 / std::sqrt(suu) : 0;
  fit.mean_u = su / sw;
  fit.mean_v = sv / sw;
  for (size_t i = first; i <= last; ++i) fit.chi2 += std::pow((c.v[i] - fit.at(c.x[i])) / c.sigma[i], 2);
  return fit;
}

// A segment is a stretch of a ramp, not a plateau, when it climbs nearly as
// steeply as the curve around it. Real levels are seldom perfectly flat (a
// CPU's L3 shared with other tenants drifts up by 10% an octave, DRAM rises
// with TLB misses), and real rises are seldom straight (a CPU L2 whose sets
// overflow one by one curves upward over two octaves, and the segmentation
// cuts pieces of it that are flat within their own noise). What separates
// them is relative: a level climbs far more slowly than the rises on either
// side of it, a piece of a ramp as fast as its surroundings. So a segment is
// a plateau when its own slope (log latency per octave) is below an absolute
// floor (half the smallest level step per octave), or below half the slope
// of the curve from an octave before it to an octave after it.
bool is_ramp(const Curve& c, const Segment& s, const LineFit& own, double min_step_log) {
  if (own.slope < 0.5 * min_step_log) return false;
  size_t first = s.first, last = s.last;
  while (first > 0 && c.x[first - 1] >= c.x[s.first] / 2) --first;
  while (last + 1 < c.size() && c.x[last + 1] <= c.x[s.last] * 2) ++last;
  if (first > 0) --first;
  if (last + 1 < c.size()) ++last;
  const double context_slope = (c.v[last] - c.v[first]) / std::log2(c.x[last] / c.x[first]);
  return own.slope >= 0.5 * context_slope;
}

// A segment that climbs, across its own span, by at least as much as its
// fitted line starts above the plateau before it (below_log) is a stretch
// of a rise that has not ended, not a level: a level starts clearly above
// its predecessor and drifts little over its span. (A 2-vCPU Emerald
// Rapids VM's 2 MiB L2 climbs from 0.4 MiB, 5.5 to about 7 ns at 1 MiB,
// into its rise to the L3: a stretch of that climb with the rise's first
// point is neither flat enough for a level nor as steep as the L3's rise
// around it, tests/data/pocl_emr.) The climb must stand out of the points'
// noise (a slope above its standard error) and above is_ramp's floor for a
// flat level (half the smallest step an octave): a CPU's texture path
// steps only 15% from its L1 to its L2, which then drifts 0.05 an octave
// (tests/data/pocl_epyc/basic_texture.json).
bool climbs_past_its_step(const Curve& c, const Segment& s, const LineFit& own, double below_log,
                          double min_step_log) {
  if (own.slope < 0.5 * min_step_log || own.slope <= own.slope_sigma) return false;
  return own.slope * octaves(c.x[s.first], c.x[s.last]) >= own.at(c.x[s.first]) - below_log;
}

std::vector<Plateau> find_plateaus(const Curve& c, const HierarchyOptions& options) {
  const std::vector<Segment> segments =
      segment_piecewise_constant(c.v, c.sigma, change_point_penalty(c.size()));
  const double min_step_log = std::log(options.min_step_ratio);
  std::vector<Plateau> plateaus;
  for (const Segment& s : segments) {
    const double span = octaves(c.x[s.first], c.x[s.last]);
    if (static_cast<int>(s.size()) < options.min_plateau_points || span < options.min_plateau_octaves)
      continue;
    const LineFit own = fit_line(c, s.first, s.last);
    if (is_ramp(c, s, own, min_step_log)) continue;
    // Latency never falls as a footprint grows; a segment whose fitted line
    // falls by the smallest step across its span, its slope over twice its
    // standard error below zero, is a disturbance of the sweep (launches
    // sharing the machine with other work), not a level.
    if (own.slope < -2 * own.slope_sigma && -own.slope * span >= min_step_log) continue;
    Plateau p;
    for (size_t i = s.first; i <= s.last; ++i) p.points.push_back(i);
    update_level(p, c);
    // Only a would-be level of its own, judged at the level it would carry
    // (its median, as merge_plateaus judges it, not the segment's weighted
    // mean, which a climb's noisier last points move less): a segment
    // nearer than that to the plateau before it is merged into it.
    if (!plateaus.empty() && p.level - plateaus.back().level >= min_step_log &&
        climbs_past_its_step(c, s, own, plateaus.back().level, min_step_log))
      continue;
    plateaus.push_back(std::move(p));
  }
  return plateaus;
}

// Adjacent plateaus closer than min_step_ratio are one level that noise, a
// spike or a bump split in two; they are joined (the points between them,
// which belong to neither, stay out). A plateau followed by a clearly lower one
// cannot be a cache level (a nearer level is faster), so it is dropped as a
// disturbance of the sweep; `dropped` collects their notes.
void merge_plateaus(std::vector<Plateau>& plateaus, const Curve& c, double min_step_log,
                    std::vector<std::string>& dropped) {
  for (size_t i = 0; i + 1 < plateaus.size();) {
    Plateau& a = plateaus[i];
    Plateau& b = plateaus[i + 1];
    const double step = b.level - a.level;
    if (std::abs(step) < min_step_log) {
      a.points.insert(a.points.end(), b.points.begin(), b.points.end());
      update_level(a, c);
      plateaus.erase(plateaus.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      i = i > 0 ? i - 1 : 0;  // the joined level may now be close to its predecessor
    } else if (step < 0) {
      dropped.push_back(
          fmt::format("Latency falls from {:.3g} ns to {:.3g} ns at {}; the higher plateau ({} .. {}) is not "
                      "counted as a level.",
                      std::exp(a.level), std::exp(b.level), bytes_text(c.x[b.first()]),
                      bytes_text(c.x[a.first()]), bytes_text(c.x[a.last()])));
      plateaus.erase(plateaus.begin() + static_cast<std::ptrdiff_t>(i));
      i = i > 0 ? i - 1 : 0;
    } else {
      ++i;
    }
  }
}

// The level of a plateau at one edge: the median of its first (or last)
// three points.
double edge_level(const Curve& c, const Plateau& p, bool first) {
  const size_t n = std::min<size_t>(3, p.points.size());
  std::vector<double> v;
  for (size_t k = 0; k < n; ++k) v.push_back(c.v[first ? p.points[k] : p.points[p.points.size() - 1 - k]]);
  return median(v);
}

// Where edge_level reads: the middle of those points.
double edge_footprint(const Curve& c, const Plateau& p, bool first) {
  const size_t k = std::min<size_t>(1, p.points.size() - 1);
  return c.x[first ? p.points[k] : p.points[p.points.size() - 1 - k]];
}

// The median latency of the first third of a plateau's points (at least
// one), ns: where the level stands just after the curve reaches it. The
// median of the latencies, not of their logs (edge_level): for an even
// count the two middle points are averaged in ns.
double plateau_head_ns(const Curve& c, const Plateau& p) {
  const size_t third = std::max<size_t>(1, p.points.size() / 3);
  std::vector<double> head;
  for (size_t k = 0; k < third; ++k) head.push_back(std::exp(c.v[p.points[k]]));
  return median(head);
}

// What translation adds, on average, to a chase over the footprints of plateau p.
double translation_share_ns(const std::vector<TranslationLevel>& levels, const Curve& c, const Plateau& p) {
  double sum = 0;
  for (size_t i : p.points) sum += translation_ns(levels, c.x[i]);
  return p.points.empty() ? 0 : sum / static_cast<double>(p.points.size());
}

// Where the curve leaves plateau p for a level at far_log (log latency).
//
// The rise is bracketed from the last point still on the plateau (within
// departure_sigmas of it, or half the step) to the first that has reached
// the next level (the same tolerance below it); that bracket is the
// capacity's interval. Inside it the latencies are turned into hit
// fractions and the capacity is read by the miss model that fits them
// (analysis/miss_model.hpp): half the loads hitting for a sharp or
// symmetric rise (a CPU's 1 MiB L2 leaves its plateau at ~400 KiB and
// reaches the next at ~2 MiB), where the rise starts for random replacement.
//
// far_x: the footprint at which far_log was read (0: not from a plateau).
// A level that fades out slowly (a few-way random one) still hits there:
// the hit fractions are relative to that, and the fit compares that model
// the same way (fit_capacity). slots_may_pair: the level's lines may hold
// two of the chase's slots (fit_capacity).
Departure find_departure(const Curve& c, const Plateau& p, double far_log, double far_x,
                         const HierarchyOptions& options, bool slots_may_pair) {
  const double near_log = edge_level(c, p, false);
  const double step_log = far_log - near_log;
  if (step_log <= 0) return {};
  const double tolerance = std::min(options.departure_sigmas * p.sigma, 0.5 * step_log);
  const double leave = near_log + tolerance;
  const double arrive = far_log - tolerance;
  size_t first = p.last();
  while (first + 1 < c.size() && c.v[first + 1] <= leave) ++first;
  if (first + 1 == c.size()) return {};
  size_t last = first + 1;
  while (last + 1 < c.size() && c.v[last] < arrive) ++last;

  const double near_ns = std::exp(near_log), far_ns = std::exp(far_log);
  std::vector<double> xs, hits;
  for (size_t i = first; i <= last; ++i) {
    xs.push_back(c.x[i]);
    hits.push_back(std::clamp((far_ns - std::exp(c.v[i])) / (far_ns - near_ns), 0.0, 1.0));
  }
  const CapacityFit fit = fit_capacity(xs, hits, options.slots_share_lines, far_x, slots_may_pair);
  Departure d;
  d.seen = true;
  d.low_bytes = c.x[first];
  d.high_bytes = c.x[last];
  // A level that fades out as slowly as a few-way random one loses its
  // first few percent of hits inside the plateau's tolerance, which then
  // ends past the capacity: that model's reading of where misses begin may
  // lie anywhere on the plateau, and the interval widens down to it.
  if (fit.model == MissModel::kSetsFillingRandom)
    d.low_bytes = std::clamp(fit.capacity_bytes, c.x[p.first()], d.low_bytes);
  d.at_bytes = std::clamp(fit.capacity_bytes, d.low_bytes, d.high_bytes);
  d.near_ns = near_ns;
  d.far_ns = far_ns;
  d.model = fit.model;
  return d;
}

// Where a level shared with work outside the run (other VMs on a cloud
// host's last-level cache, the CPU and display on a phone's system cache,
// an SMT sibling on a CPU's L1 and L2) offered less than its capacity.
// Such a level's room changes while the sweep runs, so at a footprint below
// what it held at its freest some launches hit it and others find it taken:
// the point's samples split in two, its fast tail (the point's latency, a
// low quantile) on the plateau and a share of its launches up at the next
// level. A point counts when its latency is within the lower quarter of the
// step and at least a fifth of its samples (and at least three) lie in the
// upper quarter; noise cannot do that where the next level is 1.3x away or
// more (a disturbed launch is a few percent of them), nor a rise (every
// launch of one cycle sees the same hit fraction). Two such points below
// the capacity are needed. Returns the smallest such footprint, 0 if none.
double contended_from(const Series& latency, double from_x, const Departure& d) {
  if (d.far_ns < 1.3 * d.near_ns) return 0;
  const double hit_below = d.near_ns + 0.25 * (d.far_ns - d.near_ns);
  const double miss_above = d.near_ns + 0.75 * (d.far_ns - d.near_ns);
  int points = 0;
  double lowest = 0;
  for (const Point& p : latency.points) {
    if (p.x < from_x || p.x >= d.at_bytes || p.samples.empty() || p.y > hit_below) continue;
    const auto missed = std::count_if(p.samples.begin(), p.samples.end(), [&](double v) { return v >= miss_above; });
    if (missed < 3 || 5 * missed < static_cast<std::ptrdiff_t>(p.samples.size())) continue;
    ++points;
    lowest = lowest > 0 ? std::min(lowest, p.x) : p.x;
  }
  return points >= 2 ? lowest : 0;
}

// The rise (log latency) after the sweep's last plateau to its highest later
// point; 0 unless two or more points stand min_step_ratio and departure_sigmas
// above it, since one point alone could be a disturbance.
double final_rise(const Curve& c, const Plateau& p, const HierarchyOptions& options) {
  const double clear = std::max(std::log(options.min_step_ratio), options.departure_sigmas * p.sigma);
  int above = 0;
  double rise = 0;
  for (size_t j = p.last() + 1; j < c.size(); ++j) {
    above += c.v[j] - p.level > clear ? 1 : 0;
    rise = std::max(rise, c.v[j] - p.level);
  }
  return above >= 2 ? rise : 0;
}

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

// A chase whose slots share lines (the texture probe's 2D path) never
// settles on its plateaus: every level keeps the share C / F of a footprint
// past it, so each plateau is pulled towards the level before it and each
// rise runs on for octaves. The whole curve is fitted to the line-revisit
// model at once: capacities by coordinate search (each within half to twice
// its staircase reading), latencies by least squares. Kept when the fit's
// rms error is within 3% (a sampler that keeps a line's texels together
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
  if (x.size() < 2 * (m + 1) + 2) return;
  std::vector<double> caps, start, lat;
  for (const CacheLevel* l : caches) caps.push_back(l->capacity_bytes);
  start = caps;
  double best = revisit_latencies(x, y, caps, lat);
  for (int sweep = 0; sweep < 3; ++sweep)
    for (size_t j = 0; j < m; ++j) {
      const double lo = std::max(0.5 * start[j], j > 0 ? caps[j - 1] * 1.01 : 0.0);
      const double hi = std::min(2 * start[j], j + 1 < m ? caps[j + 1] / 1.01 : 2 * start[j]);
      if (!(hi > lo)) continue;
      double keep = caps[j];
      for (int i = 0; i <= 200; ++i) {
        caps[j] = std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / 200);
        std::vector<double> l;
        const double e = revisit_latencies(x, y, caps, l);
        if (e < best) best = e, keep = caps[j];
      }
      caps[j] = keep;
    }
  const double rms = std::sqrt(revisit_latencies(x, y, caps, lat) / static_cast<double>(x.size()));
  if (!(rms <= 0.03)) {
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

// Confidence factors, each 0..1, multiplied together.
// More points on a plateau make its level and extent surer: 3 points 0.63, 6 0.86, 9 0.95.
double points_factor(int points) { return 1 - std::exp(-points / 3.0); }
// A capacity bracket one octave wide 0.5, a quarter octave 0.8.
double bracket_factor(double bracket_octaves) { return 1 / (1 + bracket_octaves); }

double step_z(const Plateau& a, const Plateau& b) {
  return (b.level - a.level) / std::hypot(a.sigma, b.sigma);
}

CacheLevel describe(const Curve& c, const Plateau& p) {
  std::vector<double> latency_ns;
  for (size_t i : p.points) latency_ns.push_back(std::exp(c.v[i]));
  CacheLevel level;
  level.latency_ns = median(latency_ns);
  level.latency_low = *std::min_element(latency_ns.begin(), latency_ns.end());
  level.latency_high = *std::max_element(latency_ns.begin(), latency_ns.end());
  level.first_x = c.x[p.first()];
  level.last_x = c.x[p.last()];
  level.points = static_cast<int>(p.points.size());
  return level;
}

// The first plateau after plateaus[k] that stands more than 1.5x what
// translation can add at its own end (translation_ns) above plateaus[k]: a
// cache ran out there beyond the TLB's reach. Null where none does; else
// `climbs_ns` and `can_add_ns` say by how much, for the note.
const Plateau* plateau_past_translation(const Curve& c, const std::vector<Plateau>& plateaus, size_t k,
                                        const std::vector<TranslationLevel>& levels, double& climbs_ns,
                                        double& can_add_ns) {
  for (size_t q = k + 1; q < plateaus.size(); ++q) {
    climbs_ns = std::exp(plateaus[q].level) - std::exp(plateaus[k].level);
    can_add_ns = translation_ns(levels, c.x[plateaus[q].last()]);
    if (climbs_ns > 1.5 * can_add_ns) return &plateaus[q];
  }
  return nullptr;
}

void add_note(std::string& notes, const std::string& note) { notes += (notes.empty() ? "" : " ") + note; }

}  // namespace

Hierarchy infer_cache_hierarchy(const Series& measured, const HierarchyOptions& options) {
  Hierarchy h;
  double tlb_confidence = 1;
  for (const TranslationLevel& t : options.translation_levels) tlb_confidence = std::min(tlb_confidence, t.confidence);
  // Page walks the tlb probe measured are taken out before the curve is
  // read: their steps then need no cutting (below), and DRAM's plateau
  // holds none of them.
  // Taking them out must not make the curve fall: where it does (a
  // set-associative TLB read as two levels), the curve is read as measured.
  WalksTakenOut taken = take_out_walks(options.translation_levels, measured, options.translation_out_everywhere);
  const std::vector<TranslationLevel>& walks = taken.walks;
  const std::vector<TranslationLevel>& lookups = taken.lookups;
  const Series& latency = taken.latency;
  const double walks_out_ns = taken.largest_ns;
  if (taken.fell)
    h.notes.push_back("The tlb probe's page walks, taken out of the curve, would make it fall: read as measured.");
  const bool walks_out = !walks.empty();
  if (walks_out_ns > 0) {
    h.translation_confidence = std::min(h.translation_confidence, tlb_confidence);
    h.notes.push_back(fmt::format(
        "Page walks taken out of every point before reading the staircase: the tlb probe's reach and penalty "
        "say a random chase misses the TLB on 1 - R/F of its loads (up to {:.3g} ns at the largest footprint).",
        walks_out_ns));
  }
  int spikes = 0;
  const Curve c = without_spikes(log_curve(latency, options.min_relative_noise), spikes);
  if (spikes > 0) h.notes.push_back(fmt::format("{} isolated spike point(s) ignored.", spikes));

  const double min_step_log = std::log(options.min_step_ratio);
  std::vector<Plateau> plateaus = find_plateaus(c, options);
  merge_plateaus(plateaus, c, min_step_log, h.notes);
  if (plateaus.empty()) {
    h.notes.push_back(
        fmt::format("No latency plateau of {} or more points spanning {} octave(s) in {} point(s); "
                    "no level can be read.",
                    options.min_plateau_points, options.min_plateau_octaves, c.size()));
    return h;
  }

  // Where the curve leaves each plateau. A departure beyond the translation
  // threshold is the TLB running out of reach: that plateau is DRAM, and
  // whatever follows is not counted. With the page walks taken out, a step
  // left past the tlb probe's reach is a cache; only one past the default
  // threshold (no GPU cache is that large) is translation still.
  const double cut_from =
      walks_out ? HierarchyOptions{}.translation_threshold_bytes : options.translation_threshold_bytes;
  std::vector<Departure> departures;
  bool translation_cut = false;
  std::string translation_note;
  for (size_t k = 0; k < plateaus.size(); ++k) {
    const Plateau& p = plateaus[k];
    const double step_log =
        k + 1 < plateaus.size() ? plateaus[k + 1].level - p.level : final_rise(c, p, options);
    // The rise runs from the latency where this plateau ends to where the
    // next begins: a level that drifts up across its plateau (a shared L3,
    // TLB misses in DRAM) must not stretch the rise before it.
    const bool next = k + 1 < plateaus.size();
    const double far_log = next ? edge_level(c, plateaus[k + 1], true) : p.level + step_log;
    const double far_x = next ? edge_footprint(c, plateaus[k + 1], true) : 0.0;
    // Slots shorter than the longest line may pair up in a level's lines
    // beyond the first (the stride is the first level's line).
    const bool slots_may_pair = k > 0 && options.slot_bytes > 0 && options.slot_bytes < kLongestLineBytes;
    const Departure d =
        step_log > 0 ? find_departure(c, p, far_log, far_x, options, slots_may_pair) : Departure{};
    if (d.seen && d.at_bytes > cut_from &&
        (walks_out ||
         translation_explains(options, d.at_bytes, std::exp(p.level + step_log) - std::exp(p.level), far_x))) {
      // Translation adds at most P (1 - R/F) a level at footprint F, its
      // penalty P past its reach R. A plateau after this one that stands
      // more than 1.5x what translation can add at its own end above this
      // plateau has a cache running out beyond the TLB's reach (a 12 MiB
      // L2 behind a 3 MiB TLB): cut here, DRAM would be read from that
      // cache's plateau. Each plateau is held to its own footprint, not to
      // every level's whole penalty, so a walk level measured far beyond
      // the caches (a VM's 109 ns walks past 100 MiB) does not excuse a
      // cache that ran out at 2 MiB. The curve is read again with every
      // translation level taken out of it, the cheap ones too; devices that
      // overlap a second-level lookup with the data's miss make that
      // correction too large by up to a lookup's cost, which the
      // confidences below (no surer than the tlb reading) allow for.
      double climbs_ns = 0, can_add_ns = 0;
      const Plateau* beyond = plateau_past_translation(c, plateaus, k, options.translation_levels, climbs_ns,
                                                       can_add_ns);
      if (!options.translation_out_everywhere && !options.translation_levels.empty() && beyond) {
        if (!take_out_walks(options.translation_levels, measured, true).walks.empty()) {
          HierarchyOptions every = options;
          every.translation_out_everywhere = true;
          Hierarchy again = infer_cache_hierarchy(measured, every);
          again.translation_confidence = std::min(again.translation_confidence, tlb_confidence);
          again.notes.push_back(fmt::format(
              "From {}, past the TLB's reach, the curve climbs {:.0f} ns more by {}, over 1.5x the {:.0f} ns "
              "translation can add there: a cache runs out beyond that reach. Read with every TLB level's "
              "misses taken out.",
              bytes_text(d.at_bytes), climbs_ns, bytes_text(c.x[beyond->last()]), can_add_ns));
          return again;
        }
        // No walks to take out (taking them out would make the curve
        // fall): the step is no translation's, and a cache ends here.
        departures.push_back(d);
        continue;
      }
      translation_note = fmt::format(
          "Latency rises again from about {} (beyond {}{}): address translation (TLB reach), not a cache; "
          "DRAM latency is read from the plateau before it.",
          bytes_text(d.at_bytes), bytes_text(cut_from),
          walks_out || options.translation_basis.empty() ? "" : ", " + options.translation_basis);
      h.notes.push_back(translation_note);
      plateaus.resize(k + 1);
      departures.emplace_back();
      translation_cut = true;
      for (const TranslationLevel& t : options.translation_levels)
        h.translation_confidence = std::min(h.translation_confidence, t.confidence);
      break;
    }
    departures.push_back(d);
  }
  // A step read as a cache running out whose rise (from where the curve
  // leaves the plateau to where it reaches the next) overlaps where the tlb
  // probe saw translation begin (0.7x the low end of its reach to 1.5x the
  // reach) may be that translation instead: the plateau before it may be DRAM, and the
  // count one too many. Either reading is then no surer than 0.75.
  // So is a plateau that runs on across that reach: translation misses
  // drift its latency up, and its end may be theirs.
  std::vector<bool> at_reach(departures.size(), false);
  for (size_t k = 0; k < departures.size() && k < plateaus.size(); ++k) {
    const Departure& d = departures[k];
    const double from = c.x[plateaus[k].first()];
    const double to = d.seen ? d.high_bytes : c.x[plateaus[k].last()];
    for (const TranslationLevel& t : options.translation_levels) {
      const double reach = t.reach_estimate_bytes > 0 ? t.reach_estimate_bytes : t.reach_bytes;
      if (to >= kTranslationOnsetOfReach * t.reach_bytes && from <= 1.5 * reach) at_reach[k] = true;
    }
  }

  // The last plateau is DRAM when caches came before it and the sweep went far
  // enough to tell; if the curve was still rising after it, the sweep ended
  // on the way to a level it never reached.
  const Plateau& last = plateaus.back();
  const bool unfinished_rise = departures.back().seen;
  const double last_ns = std::exp(last.level);
  const bool hinted_dram = options.dram_latency_hint_ns > 0 && c.x[last.last()] < options.dram_min_footprint_bytes &&
                           last_ns >= 0.9 * options.dram_latency_hint_ns &&
                           last_ns <= 1.3 * options.dram_latency_hint_ns;
  const bool last_is_dram =
      !unfinished_rise && plateaus.size() >= 2 &&
      (translation_cut || hinted_dram || c.x[last.last()] >= options.dram_min_footprint_bytes);
  if (last_is_dram && hinted_dram && !translation_cut)
    translation_note = fmt::format(
        "The sweep stopped at {}, below {}, but its last plateau ({:.0f} ns) is {:.2f}x the DRAM latency "
        "measured {}: read as DRAM.",
        bytes_text(c.x.back()), bytes_text(options.dram_min_footprint_bytes), last_ns,
        last_ns / options.dram_latency_hint_ns,
        options.dram_hint_basis.empty() ? "on another path" : options.dram_hint_basis);
  const size_t cache_count = last_is_dram ? plateaus.size() - 1 : plateaus.size();
  // A rise into the last plateau spread over 2.5 octaves or more is as
  // gradual as translation misses past a TLB's reach (1 - R/F of the loads
  // miss at footprint F), which no TLB reading took out: the last plateau
  // may hold them, or be them. Caches run out within about 1.5 octaves,
  // even under random replacement.
  if (last_is_dram && !translation_cut && cache_count > 0 && departures[cache_count - 1].seen &&
      octaves(departures[cache_count - 1].low_bytes, departures[cache_count - 1].high_bytes) >= 2.5) {
    h.translation_confidence = std::min(h.translation_confidence, 0.75);
    h.notes.push_back(
        "The rise into the last plateau is spread over 2.5 octaves or more, as translation misses past a "
        "TLB's reach are: its latency may include them, and the level before it may be a TLB's reach "
        "rather than a cache.");
  }

  for (size_t k = 0; k < cache_count; ++k) {
    const Plateau& p = plateaus[k];
    const Departure& d = departures[k];
    CacheLevel level = describe(c, p);
    const double factor_points = points_factor(level.points);
    double z_below = 0, z_above = 0;
    if (k > 0) z_below = step_z(plateaus[k - 1], p);
    if (k + 1 < plateaus.size()) {
      z_above = step_z(p, plateaus[k + 1]);
    } else if (d.seen) {
      z_above = final_rise(c, p, options) / p.sigma;
    }

    if (d.seen) {
      level.capacity_bytes = d.at_bytes;
      level.capacity_low = d.low_bytes;
      level.capacity_high = d.high_bytes;
      level.capacity_confidence =
          factor_points * separation_factor(z_above) * bracket_factor(octaves(d.low_bytes, d.high_bytes));
      const double z_nearest = k > 0 ? std::min(z_below, z_above) : z_above;
      level.latency_confidence = factor_points * separation_factor(z_nearest);
    } else {
      // The sweep ended on this plateau: the capacity is only known to exceed
      // the last footprint, and the plateau might yet be something else.
      level.end_reached = false;
      level.capacity_bytes = level.capacity_low = level.last_x;
      level.capacity_confidence = 0.2 * factor_points;
      level.latency_confidence = 0.5 * factor_points * (k > 0 ? separation_factor(z_below) : 1.0);
      add_note(level.note,
               fmt::format("The sweep ended on this plateau at {}: its capacity is at least that, and "
                           "no DRAM latency was measured.",
                           bytes_text(level.last_x)));
    }

    // A level whose room changed during the run: its capacity is the most it
    // held, which may be less than the hardware's, and the least is far below.
    const double contended = d.seen ? contended_from(latency, level.first_x, d) : 0;
    if (contended > 0) {
      level.capacity_low = std::min(level.capacity_low, contended);
      level.capacity_confidence = std::min(level.capacity_confidence, 0.45);
      add_note(level.note,
               fmt::format("Contended: from {} up, launches at one footprint split between this level's "
                           "latency and the next's, so the room this level offered changed during the run "
                           "(something outside it shares the cache: other VMs on a cloud host, the CPU "
                           "or display on a phone's system cache, an SMT sibling). The capacity is the "
                           "most it held free; the hardware's may be larger, and the interval reaches "
                           "down to where it was seen taken.",
                           bytes_text(contended)));
    }

    // A rise over an octave or more: say which miss model read the capacity.
    if (d.seen && octaves(d.low_bytes, d.high_bytes) >= 1) {
      add_note(level.note,
               fmt::format("The rise to the next level is gradual ({:.1f} octaves); it fits {}, so the "
                           "capacity is read {}; the interval spans the whole rise.",
                           octaves(d.low_bytes, d.high_bytes),
                           d.model == MissModel::kRandomReplacement ? "random replacement"
                           : d.model == MissModel::kSetsFilling     ? "sets filling together"
                           : d.model == MissModel::kSetsFillingRandom
                               ? "sets filling together under random replacement"
                           : d.model == MissModel::kLineRevisits
                               ? "lines revisited at random (several slots to a line: hits fall as C/F)"
                           : d.model == MissModel::kLineRevisitsRandom
                               ? "random replacement of lines holding two of the chase's slots each"
                               : "sets overflowing unevenly",
                           d.model == MissModel::kSetOverflow ? "where half the loads still hit"
                                                              : "where misses begin"));
    }

    // A plateau whose first third stands more than 5% (the tolerance a
    // latency is read to) above its median falls across its footprints,
    // which no cache does of itself: a chase over more bytes is no faster.
    // Something there costs more just past the level before and less later
    // (an exclusive level behind a randomly replaced first level: a drawn
    // GPU's 156 ns L2 stood at 197 ns just past its L1 and 161 ns at its
    // own capacity, and the median read 177), so the median is no one
    // latency: the latency finding is no surer than 0.75. The count is not
    // touched (the level is there). A plateau that rises across its
    // footprints is common and left alone: its end is the next rise
    // beginning (a gradual departure, sets overflowing unevenly).
    if (const double head_ns = plateau_head_ns(c, p); head_ns > 1.05 * level.latency_ns) {
      level.latency_value_cap = 0.75;
      add_note(level.note, fmt::format("The plateau falls across its footprints: it stands at {:.0f} ns where it "
                                       "begins, {:.0f}% above its median, so the median is no one latency.",
                                       head_ns, 100 * (head_ns / level.latency_ns - 1)));
    }

    if (k > 0 && level.end_reached && h.levels[k - 1].end_reached) {
      const CacheLevel& prev = h.levels[k - 1];
      const double latency_ratio = level.latency_ns / prev.latency_ns;
      const double capacity_ratio = level.capacity_bytes / prev.capacity_bytes;
      if (options.split_caches && is_far_half_of_split(latency_ratio, capacity_ratio)) {
        add_note(level.note,
                 fmt::format("Latency only {:.2f}x {}'s with {:.1f}x its capacity: probably the far half "
                             "of a split {} (as on NVIDIA H100/H200) rather than a separate cache; "
                             "then {} is the near half and this capacity the whole cache.",
                             latency_ratio, level_name(k - 1), capacity_ratio, level_name(k - 1),
                             level_name(k - 1)));
      }
    }
    // The last level when the sweep ended still rising past it, with no
    // DRAM plateau: it may be DRAM itself, with translation misses after.
    const bool last_unsure = k + 1 == cache_count && !last_is_dram && unfinished_rise && d.seen;
    if (at_reach[k] || last_unsure) {
      level.latency_confidence = std::min(level.latency_confidence, 0.75);
      level.capacity_confidence = std::min(level.capacity_confidence, 0.75);
      add_note(level.note, at_reach[k] ? "This level runs out where the tlb probe saw translation begin: it may "
                                         "be DRAM and the rise after it translation misses."
                                       : "The sweep ended still rising past this level: it may be DRAM and the "
                                         "rise after it translation misses.");
    }
    // A level read where page walks were taken out (its plateau or its rise
    // past the reach) is no surer than the tlb reading that took them out.
    if (walks_out) {
      const double to_x = d.seen ? d.high_bytes : level.last_x;
      double share = 0;
      for (size_t i = p.first(); i < c.size() && c.x[i] <= to_x; ++i)
        share = std::max(share, translation_ns(walks, c.x[i]) / std::exp(c.v[i]));
      if (share > 0.02) {
        level.latency_confidence = std::min(level.latency_confidence, 0.95 * tlb_confidence);
        level.capacity_confidence = std::min(level.capacity_confidence, 0.95 * tlb_confidence);
        add_note(level.note,
                 fmt::format("Read after taking out page walks of up to {:.0f}% of the latency (the tlb probe's "
                             "reach and penalty): no surer than that reading.",
                             100 * share));
      }
    }
    h.levels.push_back(std::move(level));
  }

  if (last_is_dram) {
    CacheLevel dram = describe(c, last);
    dram.note = translation_note;
    const Plateau& last_cache = plateaus[plateaus.size() - 2];
    dram.latency_confidence = points_factor(dram.points) * separation_factor(step_z(last_cache, last));
    if (h.translation_confidence < 1)
      dram.latency_confidence = std::min(dram.latency_confidence, 0.95 * h.translation_confidence);
    // A DRAM plateau past the TLB's reach holds translation misses too. Page
    // walks were taken out with the rest of the curve; what the other
    // levels say they add is taken out of this plateau alone. Either way
    // the latency is trusted no more than the tlb reading where the share
    // is over 2% of it.
    const double walks_ns = translation_share_ns(walks, c, last);
    const double lookups_ns = translation_share_ns(lookups, c, last);
    if (lookups_ns > 0.02 * dram.latency_ns && lookups_ns < dram.latency_ns) {
      const double raw = dram.latency_ns;
      dram.latency_ns -= lookups_ns;
      dram.latency_low -= lookups_ns;
      dram.latency_high -= lookups_ns;
      add_note(dram.note, fmt::format("The plateau ({:.0f} ns) lies past the TLB's reach: {:.0f} ns of translation "
                                      "misses (the tlb probe's reach and penalty) taken out.",
                                      raw, lookups_ns));
    }
    if (walks_ns > 0.02 * dram.latency_ns)
      add_note(dram.note, fmt::format("The plateau lies past the TLB's reach: {:.0f} ns of page walks (the tlb "
                                      "probe's reach and penalty) taken out, leaving {:.0f} ns.",
                                      walks_ns, dram.latency_ns));
    if (walks_ns + lookups_ns > 0.02 * (dram.latency_ns + lookups_ns))
      dram.latency_confidence = std::min(dram.latency_confidence, tlb_confidence * 0.95);
    // The last cache read runs out where the tlb probe saw translation
    // begin, and DRAM (past the reach, its translation taken out) stands
    // less than a step (min_step_ratio) above where that level's plateau
    // ends: that "cache" is the curve reaching DRAM before the reach, and
    // the step after it translation alone. A random or line-revisiting
    // last level approaches DRAM slowly (hits falling as C/F), so the curve
    // drifts up to just below DRAM by the time a TLB of reach 4-8x that
    // capacity runs out (a 16 MiB L2 behind a 128 MiB TLB read as a 448 ns
    // L3 ending at 455 ns, in front of 485 ns DRAM). Its end, not its
    // median, is held against DRAM: such a plateau climbs across it. A real
    // cache there, within 15% of DRAM's latency, would not be told apart:
    // the note says so.
    if (cache_count >= 2 && h.levels.size() == cache_count && at_reach[cache_count - 1]) {
      const double end_ns = std::exp(edge_level(c, plateaus[cache_count - 1], false));
      if (dram.latency_ns < options.min_step_ratio * end_ns) {
        const CacheLevel phantom = h.levels.back();
        h.levels.pop_back();
        h.translation_confidence = std::min(h.translation_confidence, tlb_confidence);
        add_note(dram.note,
                 fmt::format("The plateau read as a level at {:.0f} ns up to {} ends ({:.0f} ns) where the tlb "
                             "probe saw translation begin, and DRAM past the reach, its translation taken out, is "
                             "{:.2f}x that end, less than a step: read as DRAM reached before the TLB's "
                             "reach, not a cache (one within {:.0f}% of DRAM's latency would not be told apart).",
                             phantom.latency_ns, bytes_text(phantom.capacity_bytes), end_ns,
                             dram.latency_ns / end_ns, 100 * (options.min_step_ratio - 1)));
      }
    }
    h.dram = std::move(dram);
  } else if (unfinished_rise) {
    h.notes.push_back(
        fmt::format("Latency was still rising at the last footprint ({}): the sweep ended before the "
                    "next level or DRAM; no DRAM latency is reported.",
                    bytes_text(c.x.back())));
  } else if (plateaus.size() >= 2) {
    h.notes.push_back(
        fmt::format("The sweep stopped at {}, below {}: the last plateau is reported as a cache whose "
                    "end was not reached, though it may be DRAM.",
                    bytes_text(c.x.back()), bytes_text(options.dram_min_footprint_bytes)));
  }
  if (options.slots_share_lines) refine_line_revisits(c, h);
  return h;
}

std::string level_name(size_t index) { return fmt::format("L{}", index + 1); }

bool is_far_half_of_split(double latency_ratio, double capacity_ratio) {
  return latency_ratio < 2 && capacity_ratio >= 1.5 && capacity_ratio <= 3;
}

}  // namespace gpuscope::analysis
