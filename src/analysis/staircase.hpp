// The staircase reader's parts (infer_cache_hierarchy puts them together,
// src/analysis/cache_hierarchy.cpp): the curve as read, its plateaus, where
// the curve leaves each, and the confidence factors. Internal to
// src/analysis; docs/inference.md section 3 names each rule.
#pragma once

#include "analysis/cache_hierarchy.hpp"
#include "analysis/miss_model.hpp"
#include "analysis/segmentation.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace gpuscope::analysis::staircase {

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

std::string bytes_text(double bytes);
inline double octaves(double from, double to) { return std::log2(to / from); }

// Rule spike-is-not-a-level: the curve without points alone above (or
// below) two neighbours that agree with each other; `spikes` counts them.
Curve without_spikes(const LogCurve& c, int& spikes);

// Rules plateau-is-a-level, ramp-is-not-a-level,
// falling-stretch-is-a-disturbance, climb-is-not-a-level: the plateaus of
// the curve, in footprint order.
std::vector<Plateau> find_plateaus(const Curve& c, const HierarchyOptions& options);

// Rules close-plateaus-are-one-level, lower-after-higher-is-dropped;
// `dropped` collects the notes of plateaus dropped.
void merge_plateaus(std::vector<Plateau>& plateaus, const Curve& c, double min_step_log,
                    std::vector<std::string>& dropped);

// The level of a plateau at one edge (log latency): the median of its first
// (or last) three points; and the footprint where that is read.
double edge_level(const Curve& c, const Plateau& p, bool first);
double edge_footprint(const Curve& c, const Plateau& p, bool first);

// The median latency of the first third of a plateau's points (at least
// one), ns: where the level stands just after the curve reaches it.
double plateau_head_ns(const Curve& c, const Plateau& p);

// Rules departure-brackets-capacity, rise-shape-picks-miss-model,
// random-sets-widen-interval: where the curve leaves plateau p for a level
// at far_log (log latency), read at footprint far_x (0: not from a
// plateau). slots_may_pair: the level's lines may hold two of the chase's
// slots (fit_capacity).
Departure find_departure(const Curve& c, const Plateau& p, double far_log, double far_x,
                         const HierarchyOptions& options, bool slots_may_pair);

// Rule last-rise-needs-two-points: the rise (log latency) after the
// sweep's last plateau p to its highest later point, or 0.
double final_rise(const Curve& c, const Plateau& p, const HierarchyOptions& options);

// Rule contended-level: the smallest footprint from from_x up where a
// level shared with work outside the run was seen taken, 0 if none.
double contended_from(const Series& latency, double from_x, const Departure& d);

// Rule line-revisit-refit: where several slots share each line, the whole
// curve fitted to the line-revisit model replaces the levels' capacities
// and latencies (kept where it explains the curve).
void refine_line_revisits(const Curve& c, Hierarchy& h);

// What translation adds, on average, to a chase over the footprints of
// plateau p, ns.
double translation_share_ns(const std::vector<TranslationLevel>& levels, const Curve& c, const Plateau& p);

// Rule cache-beyond-the-reach: the first plateau after plateaus[k] that
// stands more than kBeyondTranslationFactor x what translation can add at
// its own end above plateaus[k]. Null where none does; else `climbs_ns` and
// `can_add_ns` say by how much, for the note.
const Plateau* plateau_past_translation(const Curve& c, const std::vector<Plateau>& plateaus, size_t k,
                                        const std::vector<TranslationLevel>& levels, double& climbs_ns,
                                        double& can_add_ns);

// Confidence factors, each 0..1, multiplied together (docs/inference.md
// 3.5). pf: more points on a plateau make its level and extent surer.
double points_factor(int points);
// bf: a capacity bracket one octave wide 0.5, a quarter octave 0.8.
inline double bracket_factor(double bracket_octaves) { return 1 / (1 + bracket_octaves); }
// The step between two plateaus in noise sigmas.
inline double step_z(const Plateau& a, const Plateau& b) { return (b.level - a.level) / std::hypot(a.sigma, b.sigma); }

// A level as its plateau shows it: latency median and range, extent, points.
CacheLevel describe(const Curve& c, const Plateau& p);

void add_note(std::string& notes, const std::string& note);

}  // namespace gpuscope::analysis::staircase
