// The fit: a pattern search over the memory parameters behind a missed
// series, judged by rule `fit-criterion` (fit.hpp, docs/closed-loop.md).
#include "model/fit.hpp"

#include "model/fit_knobs.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

namespace gpuscope::model {
namespace {

using namespace fit_detail;

// Candidates replayed per fitted probe at most.
constexpr size_t kMaxEvaluations = 40;
// And the host time they may take, as a multiple of the probe's own replay
// (never less than the floor, in s: the TLB strides replay in about a
// second and their shape takes a dozen candidates): the loop's cost is held
// to a share of the run's (docs/closed-loop.md, "Cost"). A search this
// stops says so ("stopped"); what it stops at depends on the host's speed,
// which a fit far inside it (a few candidates of a small chase) never meets.
constexpr double kFitWallPerReplay = 3.0;
constexpr double kFitWallFloorS = 20.0;

// Passes over a probe's knobs: a second lets a capacity moved after a
// latency was set move that latency again.
constexpr int kPasses = 2;

// One probe's search.
class ProbeSearch {
 public:
  // From `description` (whose replay is `replay`); the values moved are
  // reported against `readers` (the model before any fit).
  ProbeSearch(const Results& measured, const ProbeDef& def, json description, const json& readers,
              const Replay& replay)
      : measured_(measured), def_(def), d_(std::move(description)), original_(readers),
        started_(std::chrono::steady_clock::now()) {
    const auto w = replay.probe_wall_s.find(def.name);
    wall_budget_s_ = std::max(kFitWallFloorS, kFitWallPerReplay * (w == replay.probe_wall_s.end() ? 0 : w->second));
    for (const auto& s : measured.series) {
      if (s.probe != def.name) continue;
      auto it = std::find_if(replay.series.begin(), replay.series.end(), [&](const SeriesReplay& r) { return r.id == s.id; });
      if (it == replay.series.end()) continue;
      series_.push_back({&s, it->modelled_y, it->noise, it->tolerance});
      points_ += s.points.size();
    }
  }

  ProbeFit run() {
    const auto t0 = std::chrono::steady_clock::now();
    ProbeFit out;
    out.probe = def_.name;
    out.points = points_;
    for (const auto& s : series_)
      if (rms_log_error(s, s.twin, 0, kInf) > s.tolerance) out.missed.push_back(s.measured->id);
    out.criterion_before = out.criterion_after = criterion(twins(), 0);
    for (int pass = 0; pass < kPasses && !out_of_budget(); ++pass) {
      bool moved = false;
      for (const Knob& k : knobs_of(def_.name, d_)) {
        if (out_of_budget()) break;
        if (region_fits(k)) continue;
        moved |= k.kind == Knob::choice ? try_choices(k) : k.kind == Knob::plateau ? try_plateau(k) : try_scale(k);
      }
      if (!moved) break;
    }
    out.criterion_after = criterion(twins(), moved_.size());
    out.evaluations = evaluations_;
    if (evaluations_ >= kMaxEvaluations)
      out.stopped = fmt::format("at its {} candidates", kMaxEvaluations);
    else if (out_of_budget())
      out.stopped = fmt::format("at its {:.0f} s of host time", wall_budget_s_);
    // The values moved along with a knob (a page's entries) are reported
    // as changes but were not charged as parameters of their own.
    std::vector<std::pair<std::string, Pointer>> changed;
    for (const auto& field : moved_order_) changed.emplace_back(field, moved_.at(field));
    for (const auto& [field, at] : companions_)
      if (value_at(d_, at) != value_at(original_, at) && !moved_.count(field)) changed.emplace_back(field, at);
    for (const auto& [field, at] : changed) {
      FitChange c;
      c.field = field;
      c.at = at.to_string();
      c.reader = value_at(original_, at);
      c.fitted = value_at(d_, at);
      const json& was = original_.at(at);
      c.basis = was.is_object() ? was.value("basis", "measured") : "measured";
      if (was.is_object() && c.basis == "measured") {
        const std::string src = was.value("source", "");
        for (size_t p = 0; p < src.size();) {
          const size_t q = std::min(src.find(", ", p), src.size());
          c.findings.push_back(src.substr(p, q - p));
          p = q + 2;
        }
      }
      out.changes.push_back(std::move(c));
    }
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

  const json& description() const { return d_; }

 private:
  struct Fitted {
    const Series* measured;
    std::vector<double> twin;  // modelled y at each measured point
    double noise;
    double tolerance;
  };

  std::vector<std::vector<double>> twins() const {
    std::vector<std::vector<double>> out;
    for (const auto& s : series_) out.push_back(s.twin);
    return out;
  }

  double criterion(const std::vector<std::vector<double>>& twins, size_t moved) const {
    double c = 0;
    for (size_t i = 0; i < series_.size(); ++i) c += fit_criterion(*series_[i].measured, twins[i], series_[i].noise);
    return c + static_cast<double>(moved) * std::log(std::max<double>(2, static_cast<double>(points_)));
  }

  // The root mean square of the log ratios over the points in [lo, hi]
  // (0 where there are none): a knee drawn at the wrong capacity misses by
  // a level's latency over a few points, which a median would not see.
  static double rms_log_error(const Fitted& s, const std::vector<double>& twin, double lo, double hi) {
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < s.measured->points.size() && k < twin.size(); ++k) {
      const Point& p = s.measured->points[k];
      if (p.x < lo || p.x > hi || !(p.y > 0)) continue;
      const double r = twin[k] > 0 && std::isfinite(twin[k]) ? std::log(twin[k] / p.y) : 1.0;
      sum += r * r;
      ++n;
    }
    return n ? std::sqrt(sum / static_cast<double>(n)) : 0;
  }

 public:
  // Whether the model already draws the knob's region: a knob is searched
  // only where some series' points there miss by more than its tolerance
  // (rms_log_error); a region the model draws is left as the readers have it.
  bool region_fits(const Knob& k) const {
    for (const auto& s : series_)
      if (rms_log_error(s, s.twin, k.x_lo, k.x_hi) > s.tolerance) return false;
    return true;
  }

  // Whether any knob's region misses: whether there is anything to fit.
  bool anything_to_fit() const {
    const auto knobs = knobs_of(def_.name, d_);
    return std::any_of(knobs.begin(), knobs.end(), [&](const Knob& k) { return !region_fits(k); });
  }

 private:

  // The twins with `candidate`'s replay over [lo, hi]; nullopt where the sim
  // rejects the candidate or the probe fails on it.
  std::optional<std::vector<std::vector<double>>> evaluate(json candidate, double lo, double hi) {
    ++evaluations_;
    whole_sets(candidate);
    try {
      const sim::SimConfig cfg = noiseless_config(candidate);
      std::map<std::string, std::vector<double>> points;
      for (const auto& s : series_)
        for (const auto& p : s.measured->points)
          if (p.x >= lo && p.x <= hi) points[s.measured->id].push_back(p.x);
      ProbeOptions options = replay_options(measured_);
      options.replay_points = &points;
      const std::vector<Series> got = run_probe_on_model(def_, cfg, options);
      auto out = twins();
      for (size_t i = 0; i < series_.size(); ++i) {
        auto it = std::find_if(got.begin(), got.end(), [&](const Series& g) { return g.id == series_[i].measured->id; });
        if (it == got.end()) return std::nullopt;
        const auto& pts = series_[i].measured->points;
        for (size_t k = 0; k < pts.size(); ++k) {
          if (pts[k].x < lo || pts[k].x > hi) continue;
          bool interpolated = false;
          out[i][k] = modelled_at(*it, pts[k].x, interpolated);
        }
      }
      candidate_ = std::move(candidate);
      return out;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Takes the candidate last evaluated if it lowers the criterion (moving
  // `k` once more counts only the first time).
  bool accept_if_better(const Knob& k, const std::optional<std::vector<std::vector<double>>>& twins) {
    if (!twins) return false;
    const size_t moved = moved_.size() + (moved_.count(k.field) ? 0 : 1);
    const double before = criterion(this->twins(), moved_.size());
    if (!(criterion(*twins, moved) < before)) return false;
    d_ = candidate_;
    for (size_t i = 0; i < series_.size(); ++i) series_[i].twin = (*twins)[i];
    if (k.keep_reach) companions_.emplace("memory.tlb.entries", Pointer("/memory/tlb/entries"));
    if (k.full_ways_follow)
      companions_.emplace(k.field.substr(0, k.field.rfind('.')) + ".associativity", k.at.parent_pointer() / "associativity");
    if (!moved_.count(k.field)) moved_order_.push_back(k.field);
    moved_[k.field] = k.at;
    // Moved back to the readers' value: no longer a fitted parameter.
    if (value_at(d_, k.at) == value_at(original_, k.at)) {
      moved_.erase(k.field);
      moved_order_.erase(std::find(moved_order_.begin(), moved_order_.end(), k.field));
    }
    return true;
  }

  bool try_choices(const Knob& k) {
    bool any = false;
    for (const json& alt : k.alternatives) {
      if (out_of_budget()) break;
      json c = d_;
      if (k.keep_reach) {
        const Pointer entries("/memory/tlb/entries");
        const double reach = number_at(c, entries, 1) * number_at(c, k.at, 1);
        set_value(c, entries, static_cast<uint64_t>(std::max(1.0, std::round(reach / alt.get<double>()))));
      }
      set_value(c, k.at, alt);
      any |= accept_if_better(k, evaluate(std::move(c), k.x_lo, k.x_hi));
    }
    return any;
  }

  // A level's latency from its plateau: the chase there is its hit latency
  // alone, so the ratio of measured to modelled sets it in one step.
  bool try_plateau(const Knob& k) {
    const double v = number_at(d_, k.at);
    if (!(v > 0)) return false;
    std::vector<double> ratios;
    for (const auto& s : series_)
      for (size_t i = 0; i < s.measured->points.size(); ++i) {
        const Point& p = s.measured->points[i];
        if (p.x >= k.plateau_lo && p.x <= k.plateau_hi && p.y > 0 && s.twin[i] > 0) ratios.push_back(p.y / s.twin[i]);
      }
    if (ratios.empty()) return false;
    const double r = median(ratios);
    if (std::abs(r - 1) < 1e-3) return false;
    json c = d_;
    set_value(c, k.at, v * r);
    return accept_if_better(k, evaluate(std::move(c), k.x_lo, k.x_hi));
  }

  // Pattern search in log space: a step up or down that lowers the
  // criterion is taken and tried again; else the step is halved (in log),
  // down to the knob's finest.
  bool try_scale(const Knob& k) {
    bool any = false;
    for (double step = k.first_step; step >= k.last_step && !out_of_budget(); step = std::sqrt(step)) {
      bool took = true;
      while (took && !out_of_budget()) {
        took = false;
        for (double f : {step, 1 / step}) {
          const double v = number_at(d_, k.at);
          double cand = v * f;
          if (k.integer) cand = std::max(1.0, std::round(cand));
          if (cand == v) continue;
          json c = d_;
          set_value(c, k.at, k.integer ? json(static_cast<uint64_t>(cand)) : json(cand));
          if (k.full_ways_follow) keep_fully_associative(c, k.at, v);
          // The region moves with a capacity: cover the knee where it would be.
          const double lo = std::min(k.x_lo, k.x_lo * f), hi = k.x_hi == kInf ? kInf : std::max(k.x_hi, k.x_hi * f);
          if (accept_if_better(k, evaluate(std::move(c), lo, hi))) {
            took = any = true;
            break;
          }
        }
      }
      if (step <= 1) break;
    }
    return any;
  }

  bool out_of_budget() const {
    return evaluations_ >= kMaxEvaluations ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > wall_budget_s_;
  }

  const Results& measured_;
  const ProbeDef& def_;
  json d_, original_, candidate_;
  std::vector<Fitted> series_;
  size_t points_ = 0;
  size_t evaluations_ = 0;
  std::chrono::steady_clock::time_point started_;
  double wall_budget_s_ = 0;
  std::map<std::string, Pointer> moved_;
  std::vector<std::string> moved_order_;
  std::map<std::string, Pointer> companions_;
};

}  // namespace

bool Fit::changed() const {
  return std::any_of(probes.begin(), probes.end(), [](const ProbeFit& p) { return !p.changes.empty(); });
}

double fit_criterion(const Series& measured, const std::vector<double>& modelled_y, double noise) {
  double sum = 0;
  size_t n = 0;
  for (size_t k = 0; k < measured.points.size() && k < modelled_y.size(); ++k) {
    const double y = measured.points[k].y, m = modelled_y[k];
    if (!(y > 0) || !std::isfinite(y)) continue;
    // A point the model gives nothing at (or nonsense) counts as missed by
    // a factor of e: the fit must not gain by losing points.
    const double r = m > 0 && std::isfinite(m) ? std::log(m / y) : 1.0;
    sum += r * r;
    ++n;
  }
  if (n == 0) return 0;
  const double floor = std::max(kCriterionFloor, noise);
  return static_cast<double>(n) * std::log(std::max(sum / static_cast<double>(n), floor * floor));
}

Fit fit_model(const Results& measured, const nlohmann::json& description, const Replay& replay, unsigned threads) {
  const auto t0 = std::chrono::steady_clock::now();
  Fit out;
  out.description = description;
  // Each probe with a missed series the fit has knobs for, in
  // kFittedProbes' order, from the model the one before left.
  json current = description;
  for (const char* probe : kFittedProbes) {
    const ProbeDef* def = replayable_probe(probe);
    if (!def || knobs_of(probe, current).empty()) continue;
    Replay start = replay;
    if (current != description) {
      // An earlier probe's fit moved values: this probe's series replayed
      // on that model are where its search starts.
      Results only = measured;
      std::erase_if(only.series, [&](const Series& s) { return s.probe != probe; });
      start = replay_on_model(only, current, threads);
    }
    ProbeSearch search(measured, *def, current, description, start);
    if (!search.anything_to_fit()) continue;
    ProbeFit f = search.run();
    // Values the earlier fit moved and this one left are the earlier's.
    std::erase_if(f.changes, [&](const FitChange& c) {
      return std::any_of(out.probes.begin(), out.probes.end(), [&](const ProbeFit& p) {
        return std::any_of(p.changes.begin(), p.changes.end(),
                           [&](const FitChange& e) { return e.field == c.field && e.fitted == c.fitted; });
      });
    });
    // A value both moved: the later probe's, reported once.
    for (auto& p : out.probes)
      std::erase_if(p.changes, [&](const FitChange& e) {
        return std::any_of(f.changes.begin(), f.changes.end(), [&](const FitChange& c) { return c.field == e.field; });
      });
    current = search.description();
    out.probes.push_back(std::move(f));
  }
  out.description = with_fitted_values(description, out);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

nlohmann::json with_fitted_values(const nlohmann::json& description, const Fit& fit) {
  json out = description;
  for (const auto& p : fit.probes)
    for (const auto& c : p.changes) {
      const Pointer at(c.at);
      if (!out.contains(at)) continue;
      json& slot = out.at(at);
      const std::string said = fmt::format("the readers' {} ({}); the fit to {} moved it (rule fit-criterion)",
                                           c.reader.dump(), c.basis, fmt::join(p.missed, ", "));
      json ann = {{"value", c.fitted}, {"basis", "fitted"}, {"note", said}};
      if (slot.is_object() && slot.contains("source")) ann["source"] = slot["source"];
      slot = std::move(ann);
    }
  whole_sets(out);
  return out;
}

Fit recorded_fit(const nlohmann::json& j) {
  Fit out;
  if (!j.is_object() || j.value("verdict", "") != "kept" || !j.contains("probes") || !j["probes"].is_array())
    return out;
  for (const auto& p : j["probes"]) {
    if (!p.is_object() || !p.contains("changes") || !p["changes"].is_array()) continue;
    ProbeFit pf;
    pf.probe = p.value("probe", "");
    if (p.contains("missed") && p["missed"].is_array())
      for (const auto& m : p["missed"])
        if (m.is_string()) pf.missed.push_back(m.get<std::string>());
    for (const auto& c : p["changes"]) {
      if (!c.is_object() || !c.contains("at") || !c["at"].is_string() || !c.contains("fitted")) continue;
      FitChange fc;
      fc.field = c.value("field", "");
      fc.at = c["at"].get<std::string>();
      // A hand-edited pointer that is not one is not a change.
      try {
        (void)Pointer(fc.at);
      } catch (const std::exception&) {
        continue;
      }
      fc.reader = c.value("reader", json());
      fc.fitted = c["fitted"];
      fc.basis = c.value("basis", "measured");
      if (c.contains("findings") && c["findings"].is_array())
        for (const auto& f : c["findings"])
          if (f.is_string()) fc.findings.push_back(f.get<std::string>());
      pf.changes.push_back(std::move(fc));
    }
    out.probes.push_back(std::move(pf));
  }
  return out;
}

void apply_fit_to_findings(std::vector<Finding>& findings, const Fit& fit) {
  const double page = number_at(fit.description, Pointer("/memory/tlb/page_bytes"), 0);
  for (const auto& p : fit.probes)
    for (const auto& c : p.changes) {
      if (!c.fitted.is_number()) continue;
      for (const auto& id : c.findings) {
        Finding* f = find_finding(findings, id);
        if (!f || !std::holds_alternative<double>(f->value)) continue;
        double v = c.fitted.get<double>();
        // The model holds the TLB's entries; the finding its reach.
        if (c.field == "memory.tlb.entries") {
          if (!(page > 0)) continue;
          v *= page;
        }
        const double was = std::get<double>(f->value);
        f->value = v;
        if (f->low) f->low = std::min(*f->low, v);
        if (f->high) f->high = std::max(*f->high, v);
        const std::string said = fmt::format(
            "Its reader read {:g}; the model fitted to {} (rule fit-criterion) holds {:g}, which reproduces the "
            "data better.",
            was, fmt::join(p.missed, ", "), v);
        f->note = f->note.empty() ? said : f->note + " " + said;
      }
    }
}

std::string fit_unconfirmed(const Fit& fit, const Replay& before, const Replay& refit,
                            const std::vector<Series>& measured) {
  std::map<std::string, const SeriesReplay*> twins;
  for (const auto& s : refit.series) twins.emplace(s.id, &s);
  size_t kept_before = 0, kept_after = 0;
  for (const auto& s : before.series) kept_before += s.reproduced;
  for (const auto& s : refit.series) kept_after += s.reproduced;
  if (kept_after < kept_before)
    return fmt::format("the fitted model reproduces {} series, the readers' {}", kept_after, kept_before);
  for (const auto& p : fit.probes) {
    if (p.changes.empty()) continue;
    double c = static_cast<double>(p.changes.size()) * std::log(std::max<double>(2, static_cast<double>(p.points)));
    for (const auto& s : measured) {
      if (s.probe != p.probe) continue;
      auto it = twins.find(s.id);
      if (it == twins.end()) return fmt::format("{} was not replayed on the fitted model", s.id);
      c += fit_criterion(s, it->second->modelled_y, it->second->noise);
    }
    if (!(c < p.criterion_before))
      return fmt::format("replayed whole, the fitted {} model scores {:.1f} against the readers' {:.1f}", p.probe, c,
                         p.criterion_before);
  }
  return "";
}

nlohmann::json fit_json(const Fit& fit, const std::string& verdict) {
  json probes = json::array();
  for (const auto& p : fit.probes) {
    json changes = json::array();
    for (const auto& c : p.changes)
      changes.push_back({{"field", c.field}, {"at", c.at}, {"reader", c.reader}, {"fitted", c.fitted}, {"basis", c.basis},
                         {"findings", c.findings}});
    probes.push_back({{"probe", p.probe},
                      {"missed", p.missed},
                      {"points", p.points},
                      {"criterion_before", p.criterion_before},
                      {"criterion_after", p.criterion_after},
                      {"evaluations", p.evaluations},
                      {"stopped", p.stopped},
                      {"wall_s", p.wall_s},
                      {"changes", changes}});
  }
  return {{"wall_s", fit.wall_s}, {"verdict", verdict}, {"probes", probes}};
}

}  // namespace gpuscope::model
