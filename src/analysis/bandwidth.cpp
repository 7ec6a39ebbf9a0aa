#include "analysis/bandwidth.hpp"

#include "analysis/bandwidth_tuning.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace gpuscope::analysis {

using namespace bandwidth;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * kMiB) return fmt::format("{:.3g} GiB", bytes / (1024.0 * kMiB));
  if (bytes >= kMiB) return fmt::format("{:.3g} MiB", bytes / kMiB);
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

// A flat run stays within kFlatTolerance of its median.
bool within(double y, double ref) { return std::abs(std::log(y / ref)) <= std::log1p(kFlatTolerance.value); }

double run_median(const std::vector<double>& ys) { return median(ys); }

// Relative spread of a plateau's points, and how many there are, make its
// confidence: 4+ points within kPlateauCleanSpread read 0.9; one point alone
// 0.36.
double plateau_confidence(const Plateau& p) {
  const double spread = p.gbps > 0 ? (p.high - p.low) / p.gbps : 1;
  const double by_points = std::min(1.0, kPlateauBaseConfidence + kPlateauPerPoint * (p.points - 1));
  const double by_spread = std::clamp(1.0 - 2.0 * std::max(0.0, spread - kPlateauCleanSpread), 0.3, 1.0);
  return std::clamp(0.9 * by_points * by_spread, 0.05, 0.95);
}

// The kind a layout series measures: the last part of its id
// ("bandwidth.stream.write" -> "write").
std::string layout_kind(const Series& s) {
  const auto dot = s.id.rfind('.');
  return dot == std::string::npos ? s.id : s.id.substr(dot + 1);
}

// The shape a layout series measured at x, in words, from its meta detail
// (the last entry at x: a re-measured point replaces the earlier one).
std::string layout_shape(const Series& s, double x) {
  if (!s.meta.contains("detail") || !s.meta["detail"].is_array())
    return fmt::format("{:.0f} B per work-item", x);
  const nlohmann::json* hit = nullptr;
  for (const auto& d : s.meta["detail"])
    if (d.contains("x") && d["x"].get<double>() == x) hit = &d;
  if (hit == nullptr) return fmt::format("{:.0f} B per work-item", x);
  // Shown, not computed with: read as doubles, which any JSON number fits.
  const auto get = [&](const char* k) { return hit->contains(k) ? (*hit)[k].get<double>() : 0.0; };
  const double vec = get("vec");
  const std::string type = vec == 1 ? "uint" : fmt::format("uint{:g}", vec);
  if (s.id.find(".grid.") != std::string::npos)
    return fmt::format("{}, one per work-item, a grid as large as the launch in groups of {:g}", type,
                       get("local"));
  return fmt::format("{} x {:g} per work-item per step, {:g} groups of {:g}", type, get("unroll"),
                     get("groups"), get("local"));
}

std::string layout_name(const Series& s) {
  if (s.id.find(".grid.") != std::string::npos) return "whole-grid layout (one vector per work-item)";
  if (s.id.find(".stream.") != std::string::npos) return "grid-stride (STREAM) layout";
  return "layout " + s.id;
}

// The best point of the layout series of `kind` whose footprint lies in `w`.
struct LayoutBest {
  const Series* series = nullptr;
  const Point* point = nullptr;
};
LayoutBest best_layout(const std::vector<const Series*>& layouts, const std::string& kind,
                       const LevelWindow& w) {
  LayoutBest best;
  for (const Series* s : layouts) {
    if (s == nullptr || layout_kind(*s) != kind || !s->meta.contains("footprint_bytes")) continue;
    const double fp = s->meta["footprint_bytes"].get<double>();
    if (fp < w.low_bytes || fp > w.high_bytes) continue;
    for (const Point& p : s->points)
      if (p.y > 0 && (best.point == nullptr || p.y > best.point->y)) best = {s, &p};
  }
  return best;
}

}  // namespace

std::vector<LevelWindow> windows_from_hierarchy(const Hierarchy& h, double max_footprint_bytes) {
  std::vector<LevelWindow> out;
  double prev = 0;
  for (size_t i = 0; i < h.levels.size(); ++i) {
    const CacheLevel& l = h.levels[i];
    if (!l.end_reached || l.capacity_bytes <= 0) break;
    LevelWindow w;
    w.level = fmt::format("L{}", i + 1);
    w.low_bytes = prev == 0                                          ? 0
                  : kWindowSkipFactor * prev <= 0.5 * l.capacity_bytes ? kWindowSkipFactor * prev
                                                                       : kWindowNearFactor * prev;
    w.high_bytes = kWindowEndShare * l.capacity_bytes;
    if (w.high_bytes > w.low_bytes) out.push_back(w);
    prev = l.capacity_bytes;
  }
  if (prev > 0 && h.dram) {
    LevelWindow d;
    d.level = "dram";
    d.low_bytes = max_footprint_bytes >= 2 * kDramWindowFar * prev ? kDramWindowFar * prev : kDramWindowNear * prev;
    d.high_bytes = std::numeric_limits<double>::infinity();
    out.push_back(d);
  }
  return out;
}

std::vector<LevelWindow> windows_from_curve(const Series& read) {
  // Greedy flat runs, left to right.
  struct Run {
    size_t first, last;
    std::vector<double> ys;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < read.points.size(); ++i) {
    const double y = read.points[i].y;
    if (!(y > 0)) continue;
    if (!runs.empty() && within(y, run_median(runs.back().ys))) {
      runs.back().last = i;
      runs.back().ys.push_back(y);
    } else {
      runs.push_back({i, i, {y}});
    }
  }
  std::vector<LevelWindow> out;
  int n = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const Run& run = runs[r];
    if (run.ys.size() < kFlatRunPoints) continue;
    LevelWindow w;
    w.low_bytes = read.points[run.first].x;
    w.high_bytes = read.points[run.last].x;
    const bool last = std::none_of(runs.begin() + static_cast<long>(r) + 1, runs.end(),
                                   [](const Run& x) { return x.ys.size() >= kFlatRunPoints; });
    if (last && w.low_bytes >= HierarchyOptions{}.dram_min_footprint_bytes && run.last + 1 == read.points.size()) {
      w.level = "dram";
      w.high_bytes = std::numeric_limits<double>::infinity();
    } else {
      w.level = fmt::format("L{}", ++n);
    }
    out.push_back(w);
  }
  return out;
}

std::optional<Plateau> plateau_in(const Series& s, const LevelWindow& w) {
  std::vector<double> ys;
  Plateau p;
  for (size_t k = s.points.size(); k-- > 0;) {
    const Point& pt = s.points[k];
    if (pt.x > w.high_bytes) continue;
    if (pt.x < w.low_bytes || !(pt.y > 0)) break;
    if (!ys.empty() && !within(pt.y, run_median(ys))) break;
    ys.push_back(pt.y);
    if (p.points == 0) p.last_x = pt.x;
    p.first_x = pt.x;
    ++p.points;
  }
  if (ys.empty()) return std::nullopt;
  p.gbps = run_median(ys);
  p.low = *std::min_element(ys.begin(), ys.end());
  p.high = *std::max_element(ys.begin(), ys.end());
  return p;
}

namespace {

// Where the levels' footprint windows came from, for every finding's
// confidence, evidence and method.
struct WindowSource {
  bool from_latency = false;        // the latency probe's capacities placed them
  std::string hierarchy_series_id;  // its series, where it did
  std::string how;                  // in words, for the method
  double factor() const { return from_latency ? 1.0 : kCurveOnlyFactor.value; }
};

// A level's bandwidth: the flat run of series `s` inside window `w`.
std::optional<Finding> level_finding(const std::string& id, const Series& s, const LevelWindow& w,
                                     const WindowSource& src) {
  const auto p = plateau_in(s, w);
  if (!p) return std::nullopt;
  Finding f;
  f.id = id;
  f.value = p->gbps;
  f.unit = "GB/s";
  f.low = p->low;
  f.high = p->high;
  f.confidence = plateau_confidence(*p) * src.factor();
  f.evidence = {s.id};
  if (src.from_latency) f.evidence.push_back(src.hierarchy_series_id);
  const std::string range =
      std::isinf(w.high_bytes)
          ? fmt::format("footprints from {}", bytes_text(w.low_bytes))
          : fmt::format("footprints {} .. {}", bytes_text(w.low_bytes), bytes_text(w.high_bytes));
  f.method = fmt::format("median of the flat run of {} points ({} .. {}) of {} within {}; {}", p->points,
                         bytes_text(p->first_x), bytes_text(p->last_x), s.id, range, src.how);
  return f;
}

// DRAM: the best of the cursor curve's plateau and the other layouts' best
// points inside the window. Each candidate is a median of validated
// launches moving the bytes it counts; taking the best of a handful of
// shapes selects the layout the memory system serves fastest (the spread
// between samples is ~0.3% on the H200, far below the differences between
// layouts), which is what a bandwidth figure means.
std::optional<Finding> dram_finding(const std::string& id, const std::string& kind, const Series* cursor,
                                    const LevelWindow& w, const std::vector<const Series*>& layouts,
                                    const WindowSource& src) {
  std::optional<Finding> f;
  if (cursor) f = level_finding(id, *cursor, w, src);
  if (f && kind == "read" && f->low && f->high && *f->high > kStillFallingRatio * *f->low)
    f->note =
        "the curve still falls across the DRAM window: part of the stream still hits the last "
        "cache at the smaller footprints, so the value may read a little high";
  // Every layout's best in the window, for the method's comparison.
  std::vector<std::string> others;
  const LayoutBest best = best_layout(layouts, kind, w);
  for (const Series* s : layouts) {
    if (s == nullptr || layout_kind(*s) != kind) continue;
    const LayoutBest b = best_layout({s}, kind, w);
    if (b.point)
      others.push_back(fmt::format("{} best {:.0f} GB/s ({})", layout_name(*s), b.point->y,
                                   layout_shape(*s, b.point->x)));
  }
  const double cursor_gbps = f ? std::get<double>(f->value) : 0;
  if (f) others.insert(others.begin(), fmt::format("per-group cursor walk {:.0f} GB/s", cursor_gbps));
  const std::string compared =
      others.size() > 1 ? fmt::format(" Layouts measured: {}.", fmt::join(others, "; ")) : "";
  if (best.point == nullptr || (f && best.point->y <= cursor_gbps)) {
    if (f && !compared.empty()) f->method += "." + compared + " The cursor walk's plateau is the best.";
    return f;
  }
  const Point& p = *best.point;
  const SampleSummary sum = summarize(p.samples);
  Finding g;
  g.id = id;
  g.value = p.y;
  g.unit = "GB/s";
  if (!p.samples.empty()) {
    g.low = *std::min_element(p.samples.begin(), p.samples.end());
    g.high = *std::max_element(p.samples.begin(), p.samples.end());
  }
  g.confidence = (p.samples.size() >= 3 && sum.rel_spread < kCleanSpread ? kLayoutCleanConfidence.value
                                                                          : kLayoutScatteredConfidence.value) *
                 src.factor();
  g.evidence = {best.series->id};
  if (cursor) g.evidence.push_back(cursor->id);
  if (src.from_latency) g.evidence.push_back(src.hierarchy_series_id);
  g.method = fmt::format(
      "best of the access layouts measured at DRAM footprints ({}): the {}, {}, median of {} launches at "
      "a "
      "{} footprint (in all arrays the kernel touches).{} {}",
      std::isinf(w.high_bytes) ? fmt::format("from {}", bytes_text(w.low_bytes))
                               : fmt::format("{} .. {}", bytes_text(w.low_bytes), bytes_text(w.high_bytes)),
      layout_name(*best.series), layout_shape(*best.series, p.x), p.samples.size(),
      bytes_text(best.series->meta["footprint_bytes"].get<double>()), compared, src.how);
  return g;
}

}  // namespace

std::vector<Finding> bandwidth_findings(const Series* read, const Series* write, const Series* copy,
                                        const Hierarchy* hierarchy, const std::string& hierarchy_series_id,
                                        const std::vector<const Series*>& layouts) {
  std::vector<Finding> out;
  if (read == nullptr || read->points.empty()) return out;
  std::vector<LevelWindow> windows;
  WindowSource src;
  if (hierarchy != nullptr) windows = windows_from_hierarchy(*hierarchy, read->points.back().x);
  if (!windows.empty()) {
    src.from_latency = true;
    src.hierarchy_series_id = hierarchy_series_id;
    src.how = "footprint windows from the latency probe's capacities (" + hierarchy_series_id + ")";
  } else {
    windows = windows_from_curve(*read);
    src.how =
        "no latency curve in these results: the read curve was split into flat runs on its own, "
        "taken as the levels in order (partial hits past a cache can make a flat run of their own: "
        "run the latency probe too for levels that match the chase's)";
  }
  for (const LevelWindow& w : windows) {
    if (w.level == "dram") {
      if (auto f = dram_finding("memory.dram.bandwidth_gbps", "read", read, w, layouts, src)) out.push_back(*f);
      if (auto f = dram_finding("memory.dram.write_gbps", "write", write, w, layouts, src)) out.push_back(*f);
      if (auto f = dram_finding("memory.dram.copy_gbps", "copy", copy, w, layouts, src)) out.push_back(*f);
      continue;
    }
    if (auto f = level_finding("memory." + w.level + ".bandwidth_gbps", *read, w, src)) {
      // Write and copy at the same level, for a person reading the note.
      std::string extra;
      if (write)
        if (auto p = plateau_in(*write, w)) extra += fmt::format("write {:.0f} GB/s", p->gbps);
      if (copy)
        if (auto p = plateau_in(*copy, w))
          extra += fmt::format("{}copy {:.0f} GB/s", extra.empty() ? "" : ", ", p->gbps);
      // At cache-resident footprints every group writes the same few lines,
      // so write and copy there measure contention for shared lines (and,
      // on NVIDIA, the write-through of L1 to L2), not a cache's write port.
      if (!extra.empty()) f->note = "at the same footprints, every core writing the same lines: " + extra;
      out.push_back(*f);
    }
  }
  return out;
}

std::vector<Finding> workgroup_findings(const Series& s) {
  std::vector<Finding> out;
  if (s.points.size() < 3) return out;
  double best = 0;
  for (const auto& p : s.points) best = std::max(best, p.y);
  if (!(best > 0)) return out;

  // Drops: one more group than a measured count costs >= 10% of the
  // bandwidth. If groups are dealt to P units, the launch lasts
  // ceil(W / P) rounds and bandwidth goes as W / ceil(W / P): from kP to
  // kP + 1 groups it falls to about k / (k + 1). The period is the gcd of
  // the drops, confirmed when every measured multiple kP falls at least half
  // as far as that model says (to below 1 - 0.5 / (k + 1)).
  std::vector<long> drops;
  int pairs = 0;
  for (size_t i = 0; i + 1 < s.points.size(); ++i) {
    const Point& a = s.points[i];
    const Point& b = s.points[i + 1];
    if (b.x != a.x + 1) continue;
    ++pairs;
    if (b.y < kDropRatio * a.y) drops.push_back(std::lround(a.x));
  }
  if (!drops.empty()) {
    long period = 0;
    for (long d : drops) period = std::gcd(period, d);
    int multiples = 0, confirmed = 0;
    for (size_t i = 0; period > 1 && i + 1 < s.points.size(); ++i) {
      const long w = std::lround(s.points[i].x);
      if (w % period != 0 || s.points[i + 1].x != s.points[i].x + 1) continue;
      ++multiples;
      const long k = w / period;  // whole rounds of `period` groups
      if (s.points[i + 1].y < (1 - kDropModelShare / static_cast<double>(k + 1)) * s.points[i].y) ++confirmed;
    }
    if (period > 1 && confirmed >= 2 && confirmed == multiples) {
      Finding f;
      f.id = "memory.bandwidth.workgroup_period";
      f.value = static_cast<double>(period);
      f.unit = "";
      f.low = f.high = static_cast<double>(period);
      f.confidence = confirmed >= kPeriodSureMultiples ? 0.9 : 0.7;
      f.evidence = {s.id};
      f.method = fmt::format(
          "bandwidth falls from every measured multiple k x {} of work-groups to one group more, about as "
          "far as k/(k+1) ({} of {} adjacent pairs): groups are dealt to {} units that run in parallel, "
          "and the groups past a multiple run while the other units idle",
          period, confirmed, pairs, period);
      if (s.meta.contains("compute_units")) {
        const double cus = s.meta["compute_units"].get<double>();
        f.note = cus == static_cast<double>(period)
                     ? fmt::format(
                           "equals the {:g} compute units the driver reports: a partial last "
                           "round of work-groups costs a whole one; size grids in multiples of it",
                           cus)
                     : fmt::format("the driver reports {:g} compute units", cus);
      }
      out.push_back(f);
    }
  }

  for (const auto& p : s.points) {
    if (p.y >= kSaturatingShare * best) {
      Finding f;
      f.id = "memory.bandwidth.saturating_workgroups";
      f.value = p.x;
      f.unit = "";
      f.confidence = 0.7;
      f.evidence = {s.id};
      f.method =
          fmt::format("fewest work-groups measured that reach 90% of the best bandwidth ({:.0f} GB/s)", best);
      if (s.meta.contains("footprint_bytes"))
        f.note = fmt::format("at a {} footprint (inside the first cache){}",
                             bytes_text(s.meta["footprint_bytes"].get<double>()),
                             s.meta.contains("group_size") ? fmt::format(", {:g} work-items per group",
                                                                         s.meta["group_size"].get<double>())
                                                           : "");
      out.push_back(f);
      break;
    }
  }
  return out;
}

namespace {

const Point* best_point(const Series* s) {
  if (s == nullptr || s->points.empty()) return nullptr;
  return &*std::max_element(s->points.begin(), s->points.end(),
                            [](const Point& a, const Point& b) { return a.y < b.y; });
}

double series_median(const Series* s) {
  std::vector<double> ys;
  for (const auto& p : s->points) ys.push_back(p.y);
  return median(ys);
}

// local.latency_ns: the median hop of the chase in local memory.
Finding local_latency_finding(const Series& latency, double lat) {
  std::vector<double> all;
  for (const auto& p : latency.points) all.insert(all.end(), p.samples.begin(), p.samples.end());
  Finding f;
  f.id = "local.latency_ns";
  f.value = lat;
  f.unit = "ns";
  f.low = all.empty() ? lat : *std::min_element(all.begin(), all.end());
  f.high = all.empty() ? lat : *std::max_element(all.begin(), all.end());
  f.confidence = summarize(all).rel_spread < kCleanSpread ? kCleanConfidence : kScatteredConfidence;
  f.evidence = {latency.id};
  f.method =
      "one work-item's dependent chase (p = *(l + p)) over a random cycle in local memory; median "
      "time per hop";
  return f;
}

// local.bandwidth_gbps: the best access width's point.
Finding local_bandwidth_finding(const Series& bandwidth, const Point& p) {
  Finding f;
  f.id = "local.bandwidth_gbps";
  f.value = p.y;
  f.unit = "GB/s";
  if (!p.samples.empty()) {
    f.low = *std::min_element(p.samples.begin(), p.samples.end());
    f.high = *std::max_element(p.samples.begin(), p.samples.end());
  }
  f.confidence = summarize(p.samples).rel_spread < kCleanSpread ? kCleanConfidence : kScatteredConfidence;
  f.evidence = {bandwidth.id};
  f.method = fmt::format(
      "conflict-free reads by every work-item of many groups, best of the access widths measured "
      "({:.0f}-byte accesses); median of the samples",
      p.x);
  return f;
}

// local.capacity_bytes: the largest allocation that worked, bracketed by
// the smallest larger one that failed.
std::optional<Finding> local_capacity_finding(const Series& capacity) {
  double works = 0, fails = 0;
  for (const auto& p : capacity.points)
    if (p.y > kAllocationWorks) works = std::max(works, p.x);
  for (const auto& p : capacity.points)
    if (p.y <= kAllocationWorks && p.x > works && (fails == 0 || p.x < fails)) fails = p.x;
  if (!(works > 0)) return std::nullopt;
  Finding f;
  f.id = "local.capacity_bytes";
  f.value = works;
  f.unit = "B";
  f.low = works;
  f.high = fails > 0 ? fails : works;
  f.confidence = fails > 0 && fails - works <= kCapacityStepBytes ? 0.95 : 0.8;
  f.evidence = {capacity.id};
  f.method = "largest local allocation that launched and held its contents (searched to 1 KiB)";
  if (capacity.meta.contains("reported_bytes")) {
    const double reported = capacity.meta["reported_bytes"].get<double>();
    if (works < reported)
      f.note = fmt::format(
          "{} B less than the driver's {} B: the driver keeps part of it for itself "
          "(NVIDIA reserves 1 KiB per work-group)",
          reported - works, reported);
    else
      f.note = "the driver's figure works; larger allocations are not tried (some drivers abort on them)";
  }
  return f;
}

// local.on_chip: local memory faster than the cached global path at the
// same footprint, in latency or in bandwidth. Where both match, local
// memory behaves as global memory behind the same cache (Mali Bifrost). A
// latency equal to the global path's (within kSameLatency) says it is that
// path whatever the bandwidth: the cache may serve local accesses wider
// than buffer loads (Bifrost's load/store cache reads local float4 at 32
// B/clk against 16 for buffers, and its local memory is not on chip).
Finding on_chip_finding(double lat_ratio, double bw_ratio, std::vector<std::string> evidence) {
  const bool faster_latency = lat_ratio < kFasterLatency;
  const bool same_latency = !faster_latency && lat_ratio <= kSameLatency;
  const bool faster_bandwidth = bw_ratio > kFasterBandwidth && !same_latency;
  Finding f;
  f.id = "local.on_chip";
  f.value = faster_latency || faster_bandwidth;
  f.unit = "";
  f.evidence = std::move(evidence);
  const double margin = std::max(std::abs(std::log(lat_ratio)), std::abs(std::log(bw_ratio)));
  if (faster_latency || faster_bandwidth) {
    f.confidence = std::clamp(0.5 + kOnChipPerLogMargin * margin, 0.5, 0.95);
    f.note = fmt::format(
        "local memory {:.2f}x the latency and {:.2f}x the bandwidth of global memory held "
        "in the first cache: separate, faster storage",
        lat_ratio, bw_ratio);
  } else {
    f.confidence = lat_ratio > kSameLatency ? 0.8 : 0.65;
    f.note = fmt::format(
        "local memory {:.2f}x the latency and {:.2f}x the bandwidth of global memory held in "
        "the first cache: it behaves as ordinary memory behind the load/store cache",
        lat_ratio, bw_ratio);
    if (bw_ratio > kFasterBandwidth)
      f.note +=
          " (its higher bandwidth with the same latency: the cache serves local accesses wider than "
          "buffer loads, as on Mali Bifrost)";
  }
  f.method = fmt::format(
      "local vs global memory at the same small footprint, same chase and same reads: on-chip when "
      "local latency is below {:g}x the global path's, or bandwidth above {:g}x where the latency is "
      "not the same (within {:.0f}%)",
      kFasterLatency.value, kFasterBandwidth.value, 100 * (kSameLatency - 1));
  return f;
}

}  // namespace

std::vector<Finding> local_findings(const Series* latency, const Series* global_latency,
                                    const Series* bandwidth, const Series* global_bandwidth,
                                    const Series* capacity) {
  std::vector<Finding> out;
  double lat = 0, glat = 0, bw = 0, gbw = 0;
  if (latency && !latency->points.empty()) {
    lat = series_median(latency);
    out.push_back(local_latency_finding(*latency, lat));
  }
  if (global_latency && !global_latency->points.empty()) glat = series_median(global_latency);
  if (const Point* p = best_point(bandwidth)) {
    bw = p->y;
    out.push_back(local_bandwidth_finding(*bandwidth, *p));
  }
  if (const Point* p = best_point(global_bandwidth)) gbw = p->y;
  if (capacity && !capacity->points.empty())
    if (std::optional<Finding> f = local_capacity_finding(*capacity)) out.push_back(std::move(*f));
  if (lat > 0 && glat > 0) {
    std::vector<std::string> evidence = {latency->id, global_latency->id};
    if (bandwidth && global_bandwidth) {
      evidence.push_back(bandwidth->id);
      evidence.push_back(global_bandwidth->id);
    }
    out.push_back(on_chip_finding(lat / glat, (bw > 0 && gbw > 0) ? bw / gbw : 1.0, std::move(evidence)));
  }
  return out;
}

}  // namespace gpuscope::analysis
