#include "analysis/texture.hpp"

#include "analysis/confidence_factors.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

namespace {

// Relative noise of a point: its samples' MAD over their median, floored
// (a handful of identical samples does not make a point exact).
double relative_noise(const Point& p) {
  if (p.samples.size() < 2 || p.y <= 0) return 0.03;
  return std::max(0.015, summarize(p.samples).rel_spread);
}

// Relative noise of a point's value (a median or low quantile of n samples
// is surer than one sample by about sqrt(n)), floored at 2%.
double estimate_noise(const Point& p) {
  if (p.samples.size() < 2 || p.y <= 0) return 0.03;
  const double n = static_cast<double>(p.samples.size());
  return std::max(0.02, 1.25 * summarize(p.samples).rel_spread / std::sqrt(n));
}

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

std::vector<Finding> texture_hierarchy_findings(const Hierarchy& h, const std::string& series_id) {
  std::vector<Finding> out = hierarchy_findings(h, series_id);
  for (Finding& f : out) {
    // memory.X -> texture.X; the method's "pointer-chase curve" is the
    // texture chase here.
    if (f.id.rfind("memory.", 0) == 0) f.id = "texture." + f.id.substr(7);
    f.method = "Texture path (dependent read_imageui chase): " + f.method;
  }
  return out;
}

void share_level_capacities(std::vector<Finding>& texture, const std::vector<Finding>& loads) {
  for (int k = 2;; ++k) {
    Finding* capacity = find_finding(texture, fmt::format("texture.L{}.capacity_bytes", k));
    const Finding* latency = find_finding(texture, fmt::format("texture.L{}.latency_ns", k));
    if (!capacity || !latency) break;
    for (int j = 2;; ++j) {
      const Finding* load_latency = find_finding(loads, fmt::format("memory.L{}.latency_ns", j));
      const Finding* load_capacity = find_finding(loads, fmt::format("memory.L{}.capacity_bytes", j));
      if (!load_latency || !load_capacity) break;
      if (std::abs(number(*latency) / number(*load_latency) - 1) > 0.05) continue;
      if (load_capacity->confidence <= capacity->confidence) break;
      const std::string own = fmt::format(
          "The texture chase read {} (confidence {:.2f}); this level stands within 5% of memory.L{}'s "
          "latency ({:.0f} ns for {:.0f}), the same cache seen through the sampler, whose load/store "
          "reading is surer and is the one given.",
          bytes_text(number(*capacity)), capacity->confidence, j, number(*latency), number(*load_latency));
      capacity->value = load_capacity->value;
      capacity->low = load_capacity->low;
      capacity->high = load_capacity->high;
      capacity->confidence = load_capacity->confidence;
      capacity->evidence = load_capacity->evidence;
      capacity->method = fmt::format("Read from the load/store staircase (memory.L{}.capacity_bytes): {}", j,
                                     load_capacity->method);
      capacity->note = own + (load_capacity->note.empty() ? "" : " " + load_capacity->note);
      break;
    }
  }
}

bool hold_texture_levels_to_loads(std::vector<Finding>& texture, const std::vector<Finding>& loads) {
  Finding* count = find_finding(texture, "texture.cache_levels");
  const Finding* load_count = find_finding(loads, "memory.cache_levels");
  if (!count || !load_count) return false;
  const int n = static_cast<int>(number(*count)), load_n = static_cast<int>(number(*load_count));
  if (n < 2 || n <= load_n) return false;
  const std::string last = fmt::format("texture.L{}.", n);
  const Finding* latency = find_finding(texture, last + "latency_ns");
  if (!latency) return false;
  const Finding* capacity = find_finding(texture, last + "capacity_bytes");
  std::string seen;
  for (int j = 1; j <= load_n; ++j) {
    const Finding* l = find_finding(loads, fmt::format("memory.L{}.latency_ns", j));
    if (!l) continue;
    if (std::abs(number(*latency) / number(*l) - 1) <= 0.10) return false;
    seen += fmt::format("{}{:.0f}", seen.empty() ? "" : ", ", number(*l));
  }
  const std::string why = fmt::format(
      " The texture chase also showed a level {} at {:.0f} ns ({}), which is not counted: the load/store "
      "staircase, which sees the same caches past the texture path's first level, counts {} level(s) and "
      "none within 10% of that latency{}. The texture sweep, sparser than the latency probe's, caught part "
      "of the climb past those caches as flat.",
      n, number(*latency),
      capacity ? bytes_text(number(*capacity)) : std::string("capacity not read"),
      load_n, seen.empty() ? "" : " (" + seen + " ns)");
  std::erase_if(texture, [&](const Finding& f) { return f.id.rfind(last, 0) == 0; });
  count = find_finding(texture, "texture.cache_levels");
  count->value = static_cast<double>(n - 1);
  if (count->low) count->low = std::min(*count->low, static_cast<double>(n - 1));
  if (count->high) count->high = std::min(*count->high, static_cast<double>(n - 1));
  count->confidence = std::min(count->confidence, load_count->confidence);
  count->note += why;
  return true;
}

std::vector<Finding> texture_bandwidth_findings(const Series& bandwidth) {
  if (bandwidth.points.empty()) return {};
  const auto best = std::max_element(bandwidth.points.begin(), bandwidth.points.end(),
                                     [](const Point& a, const Point& b) { return a.y < b.y; });
  Finding f;
  f.id = "texture.bandwidth_gbps";
  f.value = best->y;
  f.unit = "GB/s";
  if (!best->samples.empty()) {
    f.low = *std::min_element(best->samples.begin(), best->samples.end());
    f.high = *std::max_element(best->samples.begin(), best->samples.end());
  }
  const double noise = relative_noise(*best);
  // A steady rate over several launches is a sure number; a scattered one
  // (a clock that ramped, a shared CPU) less so.
  f.confidence = noise <= 0.05 ? 0.8 : noise <= 0.15 ? 0.6 : 0.4;
  f.evidence = {bandwidth.id};
  f.method = fmt::format(
      "Highest median rate over {} footprints of independent read_imageui fetches (16-byte pixels) by "
      "enough work-items to fill the device, each work-group sweeping the whole footprint; bounds: that "
      "point's sample min and max.",
      bandwidth.points.size());
  f.note = fmt::format(
      "Reached at a footprint of {}; the series has the rate at each footprint (further "
      "cache levels and DRAM through the texture path).",
      bytes_text(best->x));
  return {f};
}

namespace {

// One global footprint measured beside both texture chains.
struct PairRow {
  double x, small, large, small_noise, ratio_noise;
};

std::vector<PairRow> paired_rows(const Series& pair_small, const Series& pair_large) {
  std::vector<PairRow> rows;
  for (const Point& s : pair_small.points) {
    for (const Point& l : pair_large.points) {
      if (l.x != s.x || s.y <= 0 || l.y <= 0) continue;
      const double ns = estimate_noise(s), nl = estimate_noise(l);
      rows.push_back({s.x, s.y, l.y, ns, std::hypot(ns, nl)});
    }
  }
  return rows;
}

// A "no" is as sure as a shared cache would have been plain: the raise to
// expect is about the global chain's own miss step (taken as 50% where the
// sweep never saw it) against the ratios' noise. Only footprints where a
// shared cache would have overflowed count.
void separate_caches(TextureSharing& out, bool small_left, double small_rise, const std::vector<double>& ratio_noise,
                     double capacity, double large_texture_bytes, double last_tested_bytes) {
  if (out.points_overflowing == 0) {
    out.measurable = false;
    out.note = fmt::format(
        "No raise, but no global footprint that fits alone reached {} with the texture chain's {}: a shared "
        "cache would not have overflowed yet, so the sweep cannot tell.",
        bytes_text(capacity - large_texture_bytes), bytes_text(large_texture_bytes));
    return;
  }
  const double expected = small_left ? small_rise - 1 : 0.5;
  const double z = expected / median(ratio_noise);
  out.confidence = 0.85 * (1 - std::exp(-out.points_overflowing / 1.5)) * separation_factor(z);
  out.note = fmt::format(
      "A texture chain over {} left the global chain's rounds unchanged (at most {:.2f}x) at {} global "
      "footprints that fit alone ({} of them past where a shared cache of {} would overflow), up to {}: "
      "separate "
      "first-level caches (or a global path that bypasses one).",
      bytes_text(large_texture_bytes), out.peak_excess, out.points_tested, out.points_overflowing,
      bytes_text(capacity), bytes_text(last_tested_bytes));
}

}  // namespace

TextureSharing infer_texture_sharing(const Series& pair_small, const Series& pair_large,
                                     double large_texture_bytes, double first_level_bytes) {
  const double capacity = first_level_bytes > 0 ? first_level_bytes : large_texture_bytes / 0.75;
  TextureSharing out;
  const std::vector<PairRow> rows = paired_rows(pair_small, pair_large);
  constexpr size_t kBaseline = 3;  // the smallest global footprints set the baseline
  if (rows.size() < kBaseline + 2) {
    out.note = fmt::format("Only {} global footprint(s) measured in both series; at least {} are needed.",
                           rows.size(), kBaseline + 2);
    return out;
  }
  std::vector<double> base_small, base_ratio;
  for (size_t i = 0; i < kBaseline; ++i) {
    base_small.push_back(rows[i].small);
    base_ratio.push_back(rows[i].large / rows[i].small);
  }
  const double small0 = median(base_small);
  const double ratio0 = median(base_ratio);
  // With the global chain at its smallest, the large texture chain must hit
  // as well as the small one does; if it does not, its footprint did not
  // fit the texture path's first level and the experiment says nothing.
  if (ratio0 > 1.5) {
    out.note = fmt::format(
        "With the smallest global footprints the large texture chain already costs {:.2f}x the small one: "
        "its {} did not fit the texture path's first level, so the experiment cannot decide.",
        ratio0, bytes_text(large_texture_bytes));
    return out;
  }

  // Only footprints where the global chain alone still hits its first level
  // count, and only those large enough for a shared cache to overflow
  // (G + large > C with C about large / 0.75 gives G > large / 3).
  // How much a miss costs decides how large a raise to expect: where the
  // small series leaves its first level, its rise is the global chain's
  // step to the next level. A raise must exceed half of it, held between
  // 10% and 25% (PoCL's software image reads add ~10 ns to every fetch and
  // flatten every step; a GPU's L1 -> L2 step is several fold).
  double small_rise = 1;
  for (const PairRow& r : rows) small_rise = std::max(small_rise, r.small / small0);
  const double min_excess = std::clamp(0.5 * (small_rise - 1), 0.1, 0.25);
  double peak_z = 0;
  int run = 0, best_run = 0;
  bool raised_at_last = false, small_left = false;
  std::vector<double> ratio_noise;
  for (size_t i = kBaseline; i < rows.size(); ++i) {
    const PairRow& r = rows[i];
    const bool fits_alone = r.small <= small0 * (1 + std::max(0.15, 3 * r.small_noise));
    if (!fits_alone) {  // the global chain alone left its first level: nothing more to read
      small_left = true;
      break;
    }
    if (r.x < large_texture_bytes / 3) continue;
    ratio_noise.push_back(r.ratio_noise);
    ++out.points_tested;
    out.points_overflowing += r.x + large_texture_bytes >= capacity ? 1 : 0;
    const double excess = r.large / r.small / ratio0;
    const bool raised = excess > 1 + std::max(min_excess, 4 * r.ratio_noise);
    if (excess > out.peak_excess) {
      out.peak_excess = excess;
      out.peak_at_bytes = r.x;
      peak_z = (excess - 1) / r.ratio_noise;
    }
    run = raised ? run + 1 : 0;
    best_run = std::max(best_run, run);
    raised_at_last = raised;
    out.points_raised += raised ? 1 : 0;
  }
  if (out.points_tested < 2) {
    out.note = fmt::format(
        "Fewer than two global footprints between {} and the global chain's own first-level capacity: "
        "the sweep cannot tell.",
        bytes_text(large_texture_bytes / 3));
    return out;
  }
  out.measurable = true;
  // Two raised footprints in a row, or a raise that lasts until the global
  // chain alone leaves its first level (a step, where a sweep with two
  // points per octave may catch only one point): a disturbed point is
  // neither.
  out.shares = best_run >= 2 || (raised_at_last && out.points_raised >= 1);
  if (out.shares) {
    const double z = peak_z;
    out.confidence = separation_factor(z) * (1 - std::exp(-out.points_raised / 2.0));
    out.note = fmt::format(
        "A texture chain over {} made the global chain's rounds {:.2f}x slower at a global footprint of {} "
        "that fits alone: the two paths evict each other from one cache.",
        bytes_text(large_texture_bytes), out.peak_excess, bytes_text(out.peak_at_bytes));
  } else {
    separate_caches(out, small_left, small_rise, ratio_noise, capacity, large_texture_bytes,
                    rows[std::min(rows.size() - 1, kBaseline + out.points_tested - 1)].x);
  }
  return out;
}

std::vector<Finding> texture_sharing_findings(const TextureSharing& s, const std::string& small_id,
                                              const std::string& large_id) {
  if (!s.measurable) return {};
  Finding f;
  f.id = "texture.shares_l1";
  f.value = s.shares;
  f.confidence = s.confidence;
  f.evidence = {small_id, large_id};
  f.method =
      "One work-item alternates a dependent texture fetch and a dependent global load (each waits for the "
      "other); the global footprint is swept with the texture chain small and with it at 3/4 of the "
      "texture path's first level. Shared: the large texture chain slows the rounds (by over 15% and 4 "
      "noise sigmas, at two footprints in a row or up to where the global chain alone leaves its first "
      "level) where the global chain alone still hits its first level.";
  f.note = s.note;
  return {f};
}

}  // namespace gpuscope::analysis
