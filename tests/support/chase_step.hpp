// Whether a latency chase shows a cache's end at all: a chase whose own cost
// per hop outweighs an L2 hit (lavapipe's gathers on some hosts and Mesas)
// leaves no step to read. The recorded lavapipe tests hold their curves to
// it, and bench/cache_reading.cpp reports it beside each reading.
#pragma once

#include "core/series.hpp"

#include <cmath>

namespace gpuscope::test {

// The latency at the point nearest twice `bytes` over the latency at the
// point nearest half of it (nearest in log2 of the footprint): how much a
// cache ending at `bytes` raises the curve, 1 where it does not show. -1
// where the curve has fewer than two points.
inline double step_across(const Series& curve, double bytes) {
  if (curve.points.size() < 2) return -1;
  const auto nearest = [&](double x) {
    const Point* best = &curve.points.front();
    for (const Point& p : curve.points)
      if (std::abs(std::log2(p.x / x)) < std::abs(std::log2(best->x / x))) best = &p;
    return best->y;
  };
  return nearest(2 * bytes) / nearest(bytes / 2);
}

// The least step_across an L1's end makes where a chase can read it: the L1-to-L2 load-to-use step of current CPUs (about 1 ns to
// 3-6 ns) raises even an 8 ns lavapipe hop by a third or more
// (tests/data/lavapipe_xeon/: 1.43x at 8.3 ns), while Mesa 22.3's one load
// a lane at 12 ns on an AVX2-only EPYC moves 1.05x across its 32 KiB L1
// (tests/data/lavapipe_epyc/).
constexpr double kLeastVisibleStep = 1.2;

}  // namespace gpuscope::test
