#include "core/series.hpp"

#include <algorithm>

namespace gpuscope {

void insert_point(Series& series, Point p) {
  auto it = std::lower_bound(series.points.begin(), series.points.end(), p.x,
                             [](const Point& a, double x) { return a.x < x; });
  if (it != series.points.end() && it->x == p.x) {
    *it = std::move(p);
  } else {
    series.points.insert(it, std::move(p));
  }
}

}  // namespace gpuscope
