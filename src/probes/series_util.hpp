// Small helpers the system probes (transfer, launch, atomics, scheduling,
// clock) share for building series: every sample kept, y their median.
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

// Adds the point (x, median(samples)) with all its samples.
inline void add_point(Series& s, double x, std::vector<double> samples) {
  Point p;
  p.x = x;
  p.y = median(samples);
  p.samples = std::move(samples);
  insert_point(s, std::move(p));
}

}  // namespace gpuscope
