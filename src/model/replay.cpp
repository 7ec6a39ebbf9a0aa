// Replay: the measured run's probes on its own model, and the comparison.
#include "model/replay.hpp"

#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace gpuscope::model {
namespace {

// Two x values are one point when they agree this closely (the probes
// round footprints to whole slots, so a replayed point lands exactly).
constexpr double kSameXTolerance = 1e-6;

// Probes whose series the replay does not compare: sustain measures the
// clock governor over seconds of load (the model holds one clock: the
// governor is not in it), the graphics probes draw through a raster
// pipeline the model does not describe.
const std::set<std::string>& probes_not_replayed() {
  static const std::set<std::string> kProbes = {"sustain", "raster", "rop", "texfill", "fbcompress", "txelim",
                                                "tilemem"};
  return kProbes;
}

double series_noise(const Series& s) {
  std::vector<double> spreads;
  for (const auto& p : s.points) {
    if (p.samples.size() < 3 || !(p.y > 0)) continue;
    std::vector<double> dev;
    for (double v : p.samples) dev.push_back(std::abs(v - p.y));
    spreads.push_back(median(dev) / p.y);
  }
  return spreads.empty() ? 0 : median(spreads);
}

}  // namespace

sim::SimConfig noiseless_config(const nlohmann::json& description) {
  sim::SimConfig c = sim::parse_sim_config(description, "model.json");
  c.noise.relative_sigma = 0;
  c.noise.outlier_probability = 0;
  return c;
}

double modelled_at(const Series& m, double x, bool& interpolated) {
  interpolated = false;
  const auto& pts = m.points;
  if (pts.empty()) return std::numeric_limits<double>::quiet_NaN();
  auto it = std::lower_bound(pts.begin(), pts.end(), x, [](const Point& p, double v) { return p.x < v; });
  const auto same = [&](const Point& p) {
    return std::abs(p.x - x) <= kSameXTolerance * std::max(1.0, std::abs(x));
  };
  if (it != pts.end() && same(*it)) return it->y;
  if (it != pts.begin() && same(*std::prev(it))) return std::prev(it)->y;
  if (it == pts.begin() || it == pts.end()) return std::numeric_limits<double>::quiet_NaN();
  const Point& hi = *it;
  const Point& lo = *std::prev(it);
  interpolated = true;
  double t = (x - lo.x) / (hi.x - lo.x);
  if (lo.x > 0 && hi.x > 0 && x > 0) t = std::log(x / lo.x) / std::log(hi.x / lo.x);
  return lo.y + t * (hi.y - lo.y);
}

SeriesReplay compare_series(const Series& measured, const Series& modelled) {
  SeriesReplay r;
  r.id = measured.id;
  r.probe = measured.probe;
  r.noise = series_noise(measured);
  r.tolerance = std::max(kReproducedMedianError, kNoiseMultiple * r.noise);
  std::vector<double> errors;
  for (const auto& p : measured.points) {
    bool interpolated = false;
    const double y = modelled_at(modelled, p.x, interpolated);
    r.modelled_y.push_back(y);
    if (!std::isfinite(y) || !std::isfinite(p.y) || p.y == 0) continue;
    const double e = std::abs(y - p.y) / std::abs(p.y);
    errors.push_back(e);
    if (interpolated) ++r.interpolated;
    if (e > r.worst_error || errors.size() == 1) {
      r.worst_error = e;
      r.worst_x = p.x;
    }
  }
  r.points = errors.size();
  if (!errors.empty()) {
    r.median_error = median(errors);
    r.reproduced = r.median_error <= r.tolerance;
  }
  return r;
}

ProbeOptions replay_options(const Results& measured) {
  ProbeOptions options;
  // No noise: one sample a point says all the model has to say.
  options.harness.min_samples = 1;
  options.harness.max_samples = 1;
  if (measured.run.contains("max_launch_ms") && measured.run["max_launch_ms"].is_number())
    options.harness.max_launch_ms = measured.run["max_launch_ms"].get<double>();
  // Launches as long as the run's: the model's fixed costs per launch
  // weigh as they did on the device.
  options.harness.target_launch_ms = std::min(options.harness.target_launch_ms, options.harness.max_launch_ms / 4);
  return options;
}

const ProbeDef* replayable_probe(const std::string& name) {
  if (probes_not_replayed().count(name)) return nullptr;
  for (const auto& d : probe_registry())
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<Series> run_probe_on_model(const ProbeDef& def, const sim::SimConfig& cfg, const ProbeOptions& options) {
  sim::SimDevice device(cfg, "sim:model.json");
  ProbeContext ctx{device, options, planned_budget_s(def, options, device.info())};
  return def.run(ctx);
}

namespace {

// One probe's replay on a device of its own: its series, or why not.
struct ProbeReplay {
  std::vector<Series> series;
  std::string error;
  double wall_s = 0;
};

ProbeReplay replay_probe(const ProbeDef& def, const sim::SimConfig& cfg, const ProbeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  ProbeReplay out;
  try {
    out.series = run_probe_on_model(def, cfg, options);
  } catch (const std::exception& e) {
    out.error = fmt::format("not replayed: the probe failed on the model: {}", e.what());
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

Replay replay_on_model(const Results& measured, const nlohmann::json& description, unsigned threads) {
  const auto t0 = std::chrono::steady_clock::now();
  Replay out;
  sim::SimConfig cfg;
  try {
    cfg = noiseless_config(description);
  } catch (const std::exception& e) {
    out.skipped.push_back({"replay", fmt::format("the model is not a runnable description: {}", e.what())});
    return out;
  }

  // The measured points of every series, by id: the probes that take them
  // measure exactly there (ProbeOptions::replay_points).
  std::map<std::string, std::vector<double>> points;
  std::vector<std::string> probe_order;
  for (const auto& s : measured.series) {
    for (const auto& p : s.points) points[s.id].push_back(p.x);
    if (std::find(probe_order.begin(), probe_order.end(), s.probe) == probe_order.end())
      probe_order.push_back(s.probe);
  }

  ProbeOptions options = replay_options(measured);
  options.replay_points = &points;

  std::vector<const ProbeDef*> defs;
  for (const auto& probe : probe_order) {
    if (probes_not_replayed().count(probe)) {
      out.skipped.push_back({probe, "not replayed: the model does not describe what this probe measures"});
      continue;
    }
    const ProbeDef* def = replayable_probe(probe);
    if (!def) {
      out.skipped.push_back({probe, "not replayed: no such probe in this gpuscope"});
      continue;
    }
    defs.push_back(def);
  }

  // Each probe on a sim device of its own, so the twins do not depend on
  // the order (or the threads) the probes replay in.
  std::vector<ProbeReplay> done(defs.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < defs.size(); i = next++) done[i] = replay_probe(*defs[i], cfg, options);
  };
  const unsigned n = std::clamp<unsigned>(threads, 1, static_cast<unsigned>(std::max<size_t>(1, defs.size())));
  if (n == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }

  std::map<std::string, Series> twins;
  for (size_t i = 0; i < defs.size(); ++i) {
    out.probe_wall_s[defs[i]->name] = done[i].wall_s;
    if (!done[i].error.empty()) out.skipped.push_back({defs[i]->name, done[i].error});
    for (auto& s : done[i].series) twins.emplace(s.id, std::move(s));
  }

  for (const auto& s : measured.series) {
    if (probes_not_replayed().count(s.probe) || s.points.empty()) continue;
    auto it = twins.find(s.id);
    if (it == twins.end()) {
      if (std::none_of(out.skipped.begin(), out.skipped.end(), [&](const Skipped& k) { return k.probe == s.probe; }))
        out.skipped.push_back({s.id, "not replayed: the model's run of its probe gave no such series"});
      continue;
    }
    SeriesReplay r = compare_series(s, it->second);
    if (r.points > 0) out.series.push_back(std::move(r));
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

namespace {

// The points of `s` a finding was read from, where the finding says: a
// value in the series' y unit (a level's latency, a plateau's bandwidth) is
// read from the points within kSegmentBand of it (its plateau); a value in
// its x unit (a capacity, a reach) from the points within a factor
// kSegmentSpan of it on either side of its interval (the plateaus the step
// joins: inside the interval the step's own shape decides, which a model of
// the same capacity but another replacement draws otherwise); any other
// finding from every point.
constexpr double kSegmentBand = 0.1;
constexpr double kSegmentSpan = 1.5;

std::vector<size_t> finding_points(const Finding& f, const Series& s) {
  std::vector<size_t> out;
  const auto* v = std::get_if<double>(&f.value);
  const bool on_y = v && *v > 0 && !f.unit.empty() && f.unit == s.y.unit;
  const bool on_x = v && *v > 0 && !f.unit.empty() && f.unit == s.x.unit && !on_y;
  for (size_t k = 0; k < s.points.size(); ++k) {
    const Point& p = s.points[k];
    if (on_y && std::abs(p.y - *v) > kSegmentBand * *v) continue;
    if (on_x && (p.x < *v / kSegmentSpan || p.x > *v * kSegmentSpan)) continue;
    if (on_x && f.low && f.high && p.x >= *f.low && p.x <= *f.high) continue;
    out.push_back(k);
  }
  return out;
}

// How a finding's points of one replayed series fare.
struct SegmentVerdict {
  const SeriesReplay* series = nullptr;
  size_t points = 0;
  double median_error = 0;
  double worst_error = 0;
  double worst_x = 0;
  double over() const { return median_error / series->tolerance; }
};

SegmentVerdict judge(const Finding& f, const Series& measured, const SeriesReplay& twin) {
  SegmentVerdict v;
  v.series = &twin;
  std::vector<double> errors;
  for (size_t k : finding_points(f, measured)) {
    if (k >= twin.modelled_y.size()) continue;
    const double m = twin.modelled_y[k], y = measured.points[k].y;
    if (!std::isfinite(m) || !std::isfinite(y) || y == 0) continue;
    const double e = std::abs(m - y) / std::abs(y);
    errors.push_back(e);
    if (e > v.worst_error || errors.size() == 1) {
      v.worst_error = e;
      v.worst_x = measured.points[k].x;
    }
  }
  v.points = errors.size();
  if (!errors.empty()) v.median_error = median(errors);
  return v;
}

}  // namespace

void hold_findings_to_replay(std::vector<Finding>& findings, const Replay& replay,
                             const std::vector<Series>& measured) {
  std::map<std::string, const SeriesReplay*> twins;
  for (const auto& s : replay.series) twins.emplace(s.id, &s);
  std::map<std::string, const Series*> series;
  for (const auto& s : measured) series.emplace(s.id, &s);
  for (auto& f : findings) {
    std::optional<SegmentVerdict> worst;
    for (const auto& ev : f.evidence) {
      auto t = twins.find(ev);
      auto m = series.find(ev);
      if (t == twins.end() || m == series.end() || !(t->second->tolerance > 0)) continue;
      const SegmentVerdict v = judge(f, *m->second, *t->second);
      if (v.points == 0 || v.over() <= 1) continue;
      if (!worst || v.over() > worst->over()) worst = v;
    }
    if (!worst) continue;
    const double over = worst->over();
    f.confidence /= over;
    const std::string said = fmt::format(
        "The model of this run (model.json) does not reproduce the {} point{} of {} this was read from: their "
        "median is {:.1f}% off (tolerance {:.1f}%), the worst {:.0f}% at x = {:g}; confidence divided by {:.2f}.",
        worst->points, worst->points == 1 ? "" : "s", worst->series->id, 100 * worst->median_error,
        100 * worst->series->tolerance, 100 * worst->worst_error, worst->worst_x, over);
    f.note = f.note.empty() ? said : f.note + " " + said;
  }
}

nlohmann::json replay_json(const Replay& replay) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& s : replay.series) {
    nlohmann::json y = nlohmann::json::array();
    for (double v : s.modelled_y) y.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
    series.push_back({{"id", s.id},
                      {"probe", s.probe},
                      {"points", s.points},
                      {"interpolated", s.interpolated},
                      {"median_error", s.median_error},
                      {"worst_error", s.worst_error},
                      {"worst_x", s.worst_x},
                      {"noise", s.noise},
                      {"tolerance", s.tolerance},
                      {"reproduced", s.reproduced},
                      {"modelled_y", y}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& k : replay.skipped) skipped.push_back({{"what", k.probe}, {"reason", k.reason}});
  return {{"model", "model.json"},
          {"wall_s", replay.wall_s},
          {"probe_wall_s", replay.probe_wall_s},
          {"series", series},
          {"skipped", skipped}};
}

std::string replay_summary_line(const Replay& replay) {
  if (replay.series.empty()) return "Model: no series could be replayed on the model of this run.";
  size_t ok = 0;
  for (const auto& s : replay.series) ok += s.reproduced;
  std::string missed;
  size_t listed = 0;
  for (const auto& s : replay.series) {
    if (s.reproduced) continue;
    if (listed++ < 3) missed += fmt::format("{}{} ({:.0f}% off)", missed.empty() ? "" : ", ", s.id, 100 * s.median_error);
  }
  if (listed > 3) missed += fmt::format(" and {} more", listed - 3);
  return fmt::format("Model: model.json reproduces {} of {} measured series within their tolerance{}{}", ok,
                     replay.series.size(), missed.empty() ? "." : "; it misses ", missed.empty() ? "" : missed + ".");
}

}  // namespace gpuscope::model
