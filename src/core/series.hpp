// Measured curves: what a probe yields and what analysis consumes.
// Every point keeps all of its raw samples; `y` is the probe's estimate from
// them (a median, unless the probe's file says why another statistic).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope {

struct Axis {
  std::string name;  // e.g. "footprint"
  std::string unit;  // e.g. "B", "ns", "GB/s"
};

struct Point {
  double x = 0;                 // in the series' x unit
  double y = 0;                 // estimate from `samples`, in the series' y unit
  std::vector<double> samples;  // every timed sample, in the y unit, none dropped
};

struct Series {
  std::string id;     // stable id findings cite as evidence, e.g. "latency.global"
  std::string probe;  // the probe that produced it
  Axis x;
  Axis y;
  std::vector<Point> points;                       // sorted by x
  nlohmann::json meta = nlohmann::json::object();  // how it was measured (stride, hops, ...)
};

// Inserts `p` keeping points sorted by x; replaces a point with the same x.
void insert_point(Series& series, Point p);

}  // namespace gpuscope
