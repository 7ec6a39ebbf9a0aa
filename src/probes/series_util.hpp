// The helpers every probe builds its series with: every sample kept, y
// their median.
#pragma once

#include "core/series.hpp"
#include "core/stats.hpp"

#include <string>
#include <vector>

namespace gpuscope {

// An empty series; `meta` says how it was measured (a JSON object).
inline Series make_series(const std::string& id, const std::string& probe, Axis x, Axis y,
                          nlohmann::json meta = nlohmann::json::object()) {
  Series s;
  s.id = id;
  s.probe = probe;
  s.x = std::move(x);
  s.y = std::move(y);
  s.meta = std::move(meta);
  return s;
}

// The series `id` of `out`, made (empty) and appended when there is none.
inline Series& series_in(std::vector<Series>& out, const std::string& id, const std::string& probe, Axis x,
                         Axis y) {
  for (auto& s : out)
    if (s.id == id) return s;
  out.push_back(make_series(id, probe, std::move(x), std::move(y)));
  return out.back();
}

// Adds the point (x, y) with all its samples, in x order: y is the
// caller's estimate from them (a quantile, a minimum); returns y.
inline double add_point(Series& s, double x, std::vector<double> samples, double y) {
  Point p;
  p.x = x;
  p.y = y;
  p.samples = std::move(samples);
  insert_point(s, std::move(p));
  return y;
}

// Adds the point (x, median(samples)) with all its samples; returns its y.
inline double add_point(Series& s, double x, std::vector<double> samples) {
  const double y = median(samples);
  return add_point(s, x, std::move(samples), y);
}

// Adds the point x whose samples are rates, `work` per timed ns: one per
// entry of `ns_per_unit` (the harness's time per unit of work); returns y.
inline double add_rate_point(Series& s, double x, const std::vector<double>& ns_per_unit, double work) {
  std::vector<double> samples;
  samples.reserve(ns_per_unit.size());
  for (double ns : ns_per_unit) samples.push_back(work / ns);
  return add_point(s, x, std::move(samples));
}

// Adds the point x whose samples are times, ns per one of `ops` ops in a
// unit of work; returns y.
inline double add_time_point(Series& s, double x, const std::vector<double>& ns_per_unit, double ops) {
  std::vector<double> samples;
  samples.reserve(ns_per_unit.size());
  for (double ns : ns_per_unit) samples.push_back(ns / ops);
  return add_point(s, x, std::move(samples));
}

}  // namespace gpuscope
