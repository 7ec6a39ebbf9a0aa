// The helpers every probe builds its series with: every sample kept, y
// their median.
#pragma once

#include "core/series.hpp"
#include "core/stats.hpp"

#include <string>
#include <vector>

namespace gpuscope {

inline Series make_series(const std::string& id, const std::string& probe, Axis x, Axis y) {
  Series s;
  s.id = id;
  s.probe = probe;
  s.x = std::move(x);
  s.y = std::move(y);
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

// Adds the point (x, median(samples)) with all its samples, in x order;
// returns its y.
inline double add_point(Series& s, double x, std::vector<double> samples) {
  Point p;
  p.x = x;
  p.y = median(samples);
  p.samples = std::move(samples);
  const double y = p.y;
  insert_point(s, std::move(p));
  return y;
}

}  // namespace gpuscope
