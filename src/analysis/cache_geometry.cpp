#include "analysis/cache_geometry.hpp"

#include "analysis/cache_hierarchy.hpp"
#include "analysis/geometry_tuning.hpp"
#include "analysis/unfound.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::analysis {

using namespace geometry;

namespace {

// y of a series at x, interpolated linearly in log x; nullopt outside it.
std::optional<double> y_at_log(const Series& s, double x) {
  const auto& p = s.points;
  if (p.empty() || x < p.front().x || x > p.back().x) return std::nullopt;
  for (size_t i = 0; i + 1 < p.size(); ++i)
    if (p[i].x <= x && x <= p[i + 1].x) {
      const double t = p[i + 1].x > p[i].x ? std::log(x / p[i].x) / std::log(p[i + 1].x / p[i].x) : 0;
      return p[i].y + t * (p[i + 1].y - p[i].y);
    }
  return p.back().y;
}

// The x of the earliest point at or after `from` from which every later
// point's y passes `stays`; the last point's x where the last fails too.
template <class Test>
double smallest_x_from_which(const std::vector<Point>& p, size_t from, Test stays) {
  double x = p.back().x;
  for (size_t i = p.size(); i-- > from && stays(p[i].y);) x = p[i].x;
  return x;
}

double max_spread(const Series& s) {
  double m = 0;
  for (const auto& p : s.points)
    if (p.samples.size() >= 3) m = std::max(m, summarize(p.samples).rel_spread);
  return m;
}

}  // namespace

std::optional<FetchReading> read_pairs_curve(const Series& pairs, bool first_step) {
  if (pairs.points.size() < 3) return std::nullopt;
  FetchReading r;
  r.hit_ns = pairs.points.front().y;
  r.miss_ns = pairs.points.back().y;
  if (!(r.hit_ns > 0) || r.miss_ns < kPairsMinRise * r.hit_ns) return std::nullopt;
  const double threshold = first_step ? r.hit_ns + kPairsStepShare * (r.miss_ns - r.hit_ns)
                                      : r.miss_ns - kPairsStepShare * (r.miss_ns - r.hit_ns);
  // The smallest d from which every larger d stays above the threshold.
  r.fetch_bytes = smallest_x_from_which(pairs.points, 0, [&](double y) { return y >= threshold; });
  if (r.fetch_bytes <= pairs.points.front().x) return std::nullopt;  // no partner ever hit
  return r;
}

std::optional<FetchReading> read_exclusive_pairs(const Series& near) {
  const auto& p = near.points;
  if (p.size() < 3) return std::nullopt;
  size_t peak = 0;
  for (size_t i = 1; i + 1 < p.size(); ++i)
    if (p[i].y > p[peak].y) peak = i;
  FetchReading r;
  r.hit_ns = p.back().y;
  r.miss_ns = p[peak].y;
  if (!(r.hit_ns > 0) || r.miss_ns < kExclusiveBump * r.hit_ns) return std::nullopt;
  const double threshold = r.hit_ns + kPairsStepShare * (r.miss_ns - r.hit_ns);
  r.fetch_bytes = smallest_x_from_which(p, peak + 1, [&](double y) { return y <= threshold; });
  return r;
}

std::vector<std::pair<double, double>> half_hit_capacities(const std::vector<const Series*>& lines) {
  std::vector<std::pair<double, double>> out;
  // The level every curve starts in: the highest of the curves' first
  // points (each starts inside the first level when the sweep reaches down
  // to it; a small first level that the larger strides' sweeps start past,
  // like a 16 KiB L1 against sweeps from 32 KiB up, is then left out and the
  // next level read instead, whose line the strides can all show). A curve's
  // capacity is where it crosses half way from that to the next plateau it
  // reaches: half the loads hit there. Read this way a short plateau before
  // the rise is enough. The next plateau is the first flat stretch clearly
  // (1.5x) above the start, not the curve's last point: a sweep that runs on
  // past a second level (a 1 MiB system cache) would otherwise put the half
  // way on that level's plateau and read its capacity for some strides and
  // the first level's for others.
  //
  // The next level's latency does not depend on the stride, so one plateau
  // serves every curve: the median of the plateaus the curves show. A curve
  // whose own plateau slopes (a random-replacement second level, seen at
  // one sweep point per octave) would otherwise put its half way far up the
  // slope and read that level's capacity for its own.
  double hit = 0;
  for (const Series* s : lines)
    if (s && !s->points.empty() && s->points.front().y > hit) hit = s->points.front().y;
  if (!(hit > 0)) return out;
  std::vector<const Series*> left;  // the curves that leave the level
  // The next plateau each of them shows (`any`: its last point where it has
  // no flat stretch), and those that are flat stretches (`flat`).
  std::vector<double> flat, any;
  for (const Series* s : lines) {
    if (!s || !s->meta.contains("stride_bytes") || s->points.size() < 3) continue;
    const auto& pts = s->points;
    if (pts.back().y < kLeftLevelRatio * hit) continue;  // never left the level
    left.push_back(s);
    // The next plateau: from the first point clearly above the hit latency
    // whose successor stays within 5% of it, the points within 10%; the
    // last point when no two neighbours are that flat.
    any.push_back(pts.back().y);
    for (size_t j = 0; j + 1 < pts.size(); ++j) {
      if (pts[j].y < kLeftLevelRatio * hit || pts[j + 1].y > kPlateauNeighbourRatio * pts[j].y ||
          pts[j + 1].y < pts[j].y / kPlateauNeighbourRatio)
        continue;
      std::vector<double> next;
      for (size_t i = j; i < pts.size() && pts[i].y <= kPlateauPointsRatio * pts[j].y; ++i) next.push_back(pts[i].y);
      any.back() = median(next);
      flat.push_back(any.back());
      break;
    }
  }
  if (left.empty()) return out;
  const double half = 0.5 * (hit + median(flat.empty() ? any : flat));
  for (const Series* s : left) {
    for (size_t i = 1; i < s->points.size(); ++i) {
      const Point& a = s->points[i - 1];
      const Point& b = s->points[i];
      if (a.y < half && b.y >= half) {
        const double t = (half - a.y) / (b.y - a.y);
        out.emplace_back(s->meta["stride_bytes"].get<double>(), a.x * std::pow(b.x / a.x, t));
        break;
      }
    }
  }
  return out;
}

std::optional<LineReading> read_line_curves(const std::vector<const Series*>& lines) {
  LineReading r;
  r.capacity_by_stride = half_hit_capacities(lines);
  if (r.capacity_by_stride.size() < kLineMinStrides) return std::nullopt;
  std::sort(r.capacity_by_stride.begin(), r.capacity_by_stride.end());
  // The line L is the stride of the model C * max(1, S / L) that fits the
  // capacities best in log space (C fitted for each L): below L strides
  // share lines and the capacity stays C, from L on each slot owns a line
  // and the capacity doubles with S. Fitted over every stride at once, one
  // capacity read low or high (a half-hit footprint between two sweep
  // points) moves the fit less than it moves a ratio of two neighbours.
  // L = the smallest stride also fits a line below it (the capacity doubles
  // from the start): an upper bound; L = the largest, a line at least that
  // long (no doubling seen).
  const auto& c = r.capacity_by_stride;
  const auto misfit = [&](double line) {
    std::vector<double> log_c(c.size());
    double mean = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      log_c[i] = std::log(c[i].second / std::max(1.0, c[i].first / line));
      mean += log_c[i] / static_cast<double>(c.size());
    }
    double sum = 0;
    for (double v : log_c) sum += (v - mean) * (v - mean);
    return sum;
  };
  std::vector<std::pair<double, double>> fits;  // (misfit, L)
  for (const auto& [stride, capacity] : c) fits.emplace_back(misfit(stride), stride);
  std::sort(fits.begin(), fits.end());
  r.line_bytes = fits[0].second;
  r.misfit = fits[0].first;
  r.runner_up_misfit = fits[1].first;
  r.upper_bound_only = r.line_bytes == c.front().first;
  r.lower_bound_only = r.line_bytes == c.back().first;
  return r;
}

namespace {

// Footprint at which `s` first rises past `threshold_ns` on or after
// `from_x`, interpolated in log footprint; infinity when it never does.
double crossing(const Series& s, double from_x, double threshold_ns) {
  const auto& p = s.points;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].x < from_x * 0.999 || p[i].y <= threshold_ns) continue;
    if (i == 0 || p[i - 1].x < from_x * 0.999) return p[i].x;
    const double t = std::log(threshold_ns / p[i - 1].y) / std::log(p[i].y / p[i - 1].y);
    return p[i - 1].x * std::pow(p[i].x / p[i - 1].x, t);
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

std::vector<SharingReading> read_sharing(const Series& lone, const Series& all) {
  std::vector<SharingReading> out;
  const Hierarchy h = infer_cache_hierarchy(lone);
  const double groups = all.meta.contains("groups") ? all.meta["groups"].get<double>() : 0;
  for (size_t n = 0; n < h.levels.size(); ++n) {
    const CacheLevel& lv = h.levels[n];
    SharingReading r;
    r.level = static_cast<int>(n) + 1;
    r.next_ns = n + 1 < h.levels.size() ? h.levels[n + 1].latency_ns
                : h.dram                ? h.dram->latency_ns
                                        : kNextLevelDefault * lv.latency_ns;
    // Where the level's plateau is left: the curve passes the geometric
    // middle between this level's latency and the next one's.
    const double middle_ns = std::sqrt(lv.latency_ns * r.next_ns);
    // Compared inside the plateau, where a shared level has already run out
    // for the G groups: a shared level holds 1/G of itself per group, so the
    // G chase leaves it G times earlier. The footprint is the lone chase's
    // exit over sqrt(G): a factor sqrt(G) inside the level alone, a factor
    // sqrt(G) past it shared. (The plateau's middle, used before, served an
    // H200's 132 groups but not 2 or 4: a plateau wider than G still fits
    // G regions at its middle.)
    r.probe_footprint = std::sqrt(lv.first_x * lv.last_x);
    if (groups >= 2) {
      const double exit = crossing(lone, lv.first_x, middle_ns);
      if (std::isfinite(exit))
        r.probe_footprint = std::clamp(exit / std::sqrt(groups), lv.first_x, lv.last_x);
    }
    const auto lone_y = y_at_log(lone, r.probe_footprint);
    const auto all_y = y_at_log(all, r.probe_footprint);
    if (!lone_y || !all_y) continue;
    r.lone_ns = *lone_y;
    r.all_ns = *all_y;
    // Shared when the G chase leaves the level more than sqrt(G) times
    // earlier than the lone one (a random-replacement level lets a curve
    // leave gradually, so the exits say more than one footprint's value);
    // when the G chase never leaves it within the sweep, when the G chase
    // stands past the geometric middle at the probe footprint. The G chase's
    // exit is sought from where the level before ends, not from where the
    // lone chase settles on this level: a shared level of capacity C holds
    // C / G per group, which can lie below the lone plateau's first
    // footprint (a 768 KiB L2 behind 96 KiB L1s, 12 groups: 64 KiB each),
    // and an exit sought only from there would be read as no earlier than
    // the lone chase's.
    const double from_x = n > 0 ? h.levels[n - 1].last_x : 0;
    const double exit_all = groups >= 2 ? crossing(all, from_x, middle_ns) : 0;
    if (groups >= 2 && std::isfinite(exit_all))
      r.shared = exit_all < crossing(lone, lv.first_x, middle_ns) / std::sqrt(groups);
    else
      r.shared = r.all_ns > middle_ns;
    out.push_back(r);
  }
  return out;
}

namespace {

// A fill unit read off pairs curve `s` at `level`: the step lies between
// the last d that hit and this one.
Finding fetch_finding(const Series& s, int level, const FetchReading& r, std::string method, std::string note) {
  Finding f;
  f.id = fmt::format("memory.L{}.fetch_bytes", level);
  f.value = r.fetch_bytes;
  f.unit = "B";
  f.low = r.fetch_bytes / 2;
  f.high = r.fetch_bytes;
  f.confidence = max_spread(s) < kFetchCleanSpread ? kFetchCleanConfidence : kFetchScatteredConfidence;
  f.evidence = {s.id};
  f.method = std::move(method);
  f.note = std::move(note);
  return f;
}

// Rules fetch-unit-is-where-partner-misses and exclusive-l2-bump: each
// level's fill unit from the pairs curve whose anchors miss it.
void fetch_findings(const Series* pairs_near, const Series* pairs_mid, const Series* pairs_far, int cache_levels,
                    bool cpu, std::vector<Finding>& out) {
  const auto fetch = [&](const Series* s, int level, const std::string& where) {
    if (!s) return;
    const auto r = read_pairs_curve(*s, level == 1);
    if (!r) return;
    out.push_back(fetch_finding(
        *s, level, *r,
        "pointer chase over anchors that miss this level, each followed by a load d bytes further: "
        "the smallest d from which the second load misses too",
        fmt::format("{} Per load {:.1f} ns when the second load hits, {:.1f} ns when both miss. A unit "
                    "smaller than memory.line_bytes means a sectored cache: it keeps tags per line but "
                    "fills per sector.",
                    where, r->hit_ns, r->miss_ns)));
  };
  fetch(pairs_near, 1, "Footprint past the first level, inside the second: the first level's fill unit.");
  const std::optional<FetchReading> exclusive =
      pairs_near && !cpu ? read_exclusive_pairs(*pairs_near) : std::nullopt;
  const int last = std::max(2, cache_levels);
  if (exclusive) {
    out.push_back(fetch_finding(
        *pairs_near, 2, *exclusive,
        "pointer chase over anchors that miss the first level and hit the second, each followed by a load "
        "d bytes further: where a second level exclusive of the first makes the partner miss both (above "
        "its cost at the largest d), the smallest d from which it hits the second level again",
        fmt::format(
            "The near pairs cost {:.1f} ns a load at their peak, above the {:.1f} ns of both loads hitting "
            "the second level: the anchor's line left the second level when the first took it, so the "
            "second level is exclusive of the first (a victim cache, filled by the first level's evictions, "
            "not from memory). Its line is where the partner stops sharing the anchor's: {:.0f} B.{}",
            exclusive->miss_ns, exclusive->hit_ns, exclusive->fetch_bytes,
            cache_levels >= 3 ? " The mid pairs are not read for it."
                              : " The far pairs' step is the first level's fill, not this level's.")));
  } else if (cache_levels >= 3) {
    // The mid pairs' anchors miss the second level and hit the third, so
    // they tell the second level's fill only where a third level exists.
    fetch(pairs_mid, 2,
          "Footprint past the second level, inside the third: the second level's fill unit; a step at a "
          "smaller d is the first level's.");
  }
  if (!exclusive || last > 2)
    fetch(pairs_far, last,
          fmt::format("Footprint past every cache: the fill unit of the last level (L{}) from memory; a step "
                      "at a smaller d is the first level's.",
                      last));
}

// Rule line-from-capacity-doubling, as a finding.
std::optional<Finding> line_finding(const std::vector<const Series*>& lines) {
  const auto r = read_line_curves(lines);
  if (!r) return std::nullopt;
  Finding f;
  f.id = "memory.line_bytes";
  f.value = r->line_bytes;
  f.unit = "B";
  f.low = r->upper_bound_only ? 0.0 : r->line_bytes;
  if (!r->lower_bound_only) f.high = r->line_bytes;
  // A clear fit: capacities within about 14% (rms) of the model, and the
  // next best line kLineRunnerUpFactor times as far off.
  const double n = static_cast<double>(r->capacity_by_stride.size());
  const bool clear = r->misfit / n < kLineClearMisfit && r->runner_up_misfit > kLineRunnerUpFactor * r->misfit;
  f.confidence = r->upper_bound_only || r->lower_bound_only ? kLineBoundConfidence.value
                 : n >= kLineClearStrides && clear          ? kLineClearConfidence.value
                                                            : kLineRoughConfidence.value;
  for (const Series* s : lines)
    if (s) f.evidence.push_back(s->id);
  f.method =
      "first-level capacity (half-hit footprint) seen by random chases with one slot per S-byte "
      "block: it hardly grows with S below the line and doubles with S from the line on";
  std::string caps;
  for (const auto& [s, c] : r->capacity_by_stride)
    caps += fmt::format("{}{:.0f} B: {:.0f} KiB", caps.empty() ? "" : ", ", s, c / 1024);
  const char* bound = r->upper_bound_only ? " The capacity doubles from the smallest stride on: the line is at "
                                            "most that."
                      : r->lower_bound_only ? " The capacity does not double even at the largest stride: the "
                                              "line is at least that."
                                            : "";
  f.note = fmt::format(
      "The first level's allocation unit (tag granularity). Capacity by stride: {}; C x max(1, "
      "S / {:.0f}) fits them to {:.0f}% rms, the next best line to {:.0f}%.{} On CPUs an "
      "adjacent-line prefetcher makes each slot take two lines, so the reading there can be twice "
      "the line.",
      caps, r->line_bytes, 100 * std::sqrt(r->misfit / n), 100 * std::sqrt(r->runner_up_misfit / n), bound);
  return f;
}

// One level's sharing reading as a finding. Crowding one cache slows the
// groups to the next level's latency at most (while their regions together
// fit it). Well past that, the groups pay for something else at once as
// well: translation (their regions' pages together overflowing a TLB that
// holds one region's), which a private cache behind a shared TLB shows as
// well.
Finding sharing_finding(const SharingReading& r, const Series& lone, const Series& all, double groups) {
  Finding f;
  f.id = fmt::format("memory.L{}.shared_by_cus", r.level);
  f.value = r.shared;
  f.evidence = {lone.id, all.id};
  f.method = fmt::format(
      "{:.0f} work-groups (one per compute unit) chasing private regions at once vs "
      "one alone, compared inside this level's plateau",
      groups);
  const double gap = std::abs(std::log(r.all_ns / r.lone_ns)) / std::log(std::max(r.next_ns / r.lone_ns, 1.01));
  f.confidence = std::clamp(r.shared ? gap : 1 - gap, kSharingLowConfidence.value, kSharingHighConfidence.value);
  const bool past_next = r.shared && r.all_ns > kPastNextLevel * r.next_ns;
  if (past_next) f.confidence = std::min(f.confidence, kPastNextLevelCap.value);
  f.note = fmt::format(
      "At {:.0f} KiB per group: {:.1f} ns alone, {:.1f} ns with all groups at once (next "
      "level {:.1f} ns). {}{}",
      r.probe_footprint / 1024, r.lone_ns, r.all_ns, r.next_ns,
      r.shared ? "The groups crowd each other out: one cache for all compute units."
               : "Each group keeps its region: a cache per compute unit.",
      past_next ? " Together they are slower than the next level, which crowding this cache alone does "
                  "not explain: translation misses (a TLB shared by the groups) may be all of it."
                : "");
  return f;
}

// Rules groups-must-run-at-once and shared-when-crowded: which levels are
// shared by the compute units, and why the others are unfound.
void sharing_findings(const Series& lone, const Series& all, int cache_levels, std::vector<Finding>& out) {
  const double groups = all.meta.contains("groups") ? all.meta["groups"].get<double>() : 0;
  // Work-groups that did not run at once (a CPU driver running them one
  // after another on one thread) make every hop G times slower already
  // where each group's region fits the first level: no sharing reading.
  const double first_lone = lone.points.empty() ? 0 : lone.points.front().y;
  const double first_all = all.points.empty() ? 0 : all.points.front().y;
  if (!(groups > 1 && first_lone > 0 && first_all < kConcurrentRatio * first_lone)) {
    for (int n = 1; n <= cache_levels; ++n)
      note_unfound(fmt::format("memory.L{}.shared_by_cus", n),
                   "the work-groups of the sharing sweep did not run at once (hops were already slower "
                   "with all groups where one group's region fits the first level)",
                   {lone.id, all.id});
    return;
  }
  const auto readings = read_sharing(lone, all);
  const double region = all.meta.value("region_bytes", 0.0);
  for (int n = 1; n <= cache_levels; ++n) {
    if (std::any_of(readings.begin(), readings.end(), [&](const SharingReading& r) { return r.level == n; }))
      continue;
    note_unfound(fmt::format("memory.L{}.shared_by_cus", n),
                 fmt::format("the lone chase of the sharing sweep (to {:.0f} KiB per group) shows no plateau "
                             "left for this level: the level is larger than the sweep, or too close in "
                             "latency to the one before it",
                             region / 1024),
                 {lone.id, all.id});
  }
  for (const auto& r : readings) {
    // The sharing sweep stops at 8 MiB per group: its last plateau may be
    // DRAM, which the latency probe's count of levels tells.
    if (cache_levels > 0 && r.level > cache_levels) continue;
    out.push_back(sharing_finding(r, lone, all, groups));
  }
}

}  // namespace

std::vector<Finding> geometry_findings(const Series* pairs_near, const Series* pairs_mid,
                                       const Series* pairs_far, const std::vector<const Series*>& lines,
                                       const Series* shared_lone, const Series* shared_all,
                                       int cache_levels, bool cpu) {
  std::vector<Finding> out;
  fetch_findings(pairs_near, pairs_mid, pairs_far, cache_levels, cpu, out);
  if (std::optional<Finding> f = line_finding(lines)) out.push_back(std::move(*f));
  if (shared_lone && shared_all) sharing_findings(*shared_lone, *shared_all, cache_levels, out);
  return out;
}

}  // namespace gpuscope::analysis
