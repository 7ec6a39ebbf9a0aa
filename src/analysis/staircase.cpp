// The staircase's parts (staircase.hpp): the curve without spikes, its
// plateaus, where the curve leaves each and what a level's plateau says.
// Thresholds: staircase_tuning.hpp.
#include "analysis/staircase.hpp"

#include "analysis/staircase_translation.hpp"
#include "analysis/staircase_tuning.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis::staircase {

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}


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
      if (below * above > 0 && deviation > kSpikeSigmas * c.sigma[i] && deviation > kSpikeOverNeighbourGap * neighbours_gap) {
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

namespace {

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
  if (own.slope < kFlatSlopeShareOfStep * min_step_log) return false;
  size_t first = s.first, last = s.last;
  while (first > 0 && c.x[first - 1] >= c.x[s.first] / 2) --first;
  while (last + 1 < c.size() && c.x[last + 1] <= c.x[s.last] * 2) ++last;
  if (first > 0) --first;
  if (last + 1 < c.size()) ++last;
  const double context_slope = (c.v[last] - c.v[first]) / std::log2(c.x[last] / c.x[first]);
  return own.slope >= kRampShareOfContextSlope * context_slope;
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
  if (own.slope < kFlatSlopeShareOfStep * min_step_log || own.slope <= own.slope_sigma) return false;
  return own.slope * octaves(c.x[s.first], c.x[s.last]) >= own.at(c.x[s.first]) - below_log;
}

}  // namespace

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
    if (own.slope < -kFallingSlopeSigmas * own.slope_sigma && -own.slope * span >= min_step_log) continue;
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
  const double tolerance = std::min(options.departure_sigmas * p.sigma, kDepartureShareOfStep * step_log);
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
  if (d.far_ns < kContendedMinStepRatio * d.near_ns) return 0;
  const double hit_below = d.near_ns + kContendedHitShareOfStep * (d.far_ns - d.near_ns);
  const double miss_above = d.near_ns + kContendedMissShareOfStep * (d.far_ns - d.near_ns);
  int points = 0;
  double lowest = 0;
  for (const Point& p : latency.points) {
    if (p.x < from_x || p.x >= d.at_bytes || p.samples.empty() || p.y > hit_below) continue;
    const auto missed = std::count_if(p.samples.begin(), p.samples.end(), [&](double v) { return v >= miss_above; });
    if (missed < kContendedMinMissedSamples ||
        kContendedMissedOneIn * missed < static_cast<double>(p.samples.size()))
      continue;
    ++points;
    lowest = lowest > 0 ? std::min(lowest, p.x) : p.x;
  }
  return points >= kContendedMinPoints ? lowest : 0;
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
  return above >= kFinalRisePoints ? rise : 0;
}

double points_factor(int points) { return 1 - std::exp(-points / kPointsScale.value); }

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

// A cache ran out there beyond the TLB's reach: what translation can add
// is translation_ns at the plateau's own end.
const Plateau* plateau_past_translation(const Curve& c, const std::vector<Plateau>& plateaus, size_t k,
                                        const std::vector<TranslationLevel>& levels, double& climbs_ns,
                                        double& can_add_ns) {
  for (size_t q = k + 1; q < plateaus.size(); ++q) {
    climbs_ns = std::exp(plateaus[q].level) - std::exp(plateaus[k].level);
    can_add_ns = translation_ns(levels, c.x[plateaus[q].last()]);
    if (climbs_ns > kBeyondTranslationFactor * can_add_ns) return &plateaus[q];
  }
  return nullptr;
}

void add_note(std::string& notes, const std::string& note) { notes += (notes.empty() ? "" : " ") + note; }

}  // namespace gpuscope::analysis::staircase
