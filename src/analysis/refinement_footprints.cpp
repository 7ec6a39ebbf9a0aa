// Where a latency sweep measures next: footprints that bisect the steps of
// the staircase read so far.
#include "analysis/cache_hierarchy.hpp"
#include "analysis/segmentation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpuscope::analysis {

std::vector<double> refinement_footprints(const Series& latency, size_t max_points, double min_ratio,
                                          double granule_bytes) {
  const LogCurve c = log_curve(latency);
  const double granule = granule_bytes > 0 ? granule_bytes : 1.0;
  const auto measured = [&](double x) {
    return std::any_of(latency.points.begin(), latency.points.end(),
                       [&](const Point& p) { return std::abs(p.x - x) <= 1e-9 * std::max(1.0, x); });
  };

  // The edges of the staircase as it stands: from the last footprint on a
  // level's plateau to the first on the next (the next level's, DRAM's, or
  // where the curve was first clearly above it). A capacity is read inside
  // its edge, so points there are what bracket it.
  struct Edge {
    double from = 0, to = 0;
  };
  std::vector<Edge> edges;
  if (c.x.size() >= 3) {
    const Hierarchy h = infer_cache_hierarchy(latency);
    for (size_t k = 0; k < h.levels.size(); ++k) {
      const CacheLevel& l = h.levels[k];
      if (!l.end_reached) continue;
      const double next_first = k + 1 < h.levels.size() ? h.levels[k + 1].first_x
                                : h.dram                ? h.dram->first_x
                                                        : 0.0;
      const double to = std::max(next_first, l.capacity_high);
      if (to > l.last_x) edges.push_back({l.last_x, to});
    }
  }
  const auto edge_of = [&](double lo, double hi) {
    for (size_t e = 0; e < edges.size(); ++e)
      if (lo >= edges[e].from * (1 - 1e-9) && hi <= edges[e].to * (1 + 1e-9)) return static_cast<int>(e);
    return -1;
  };

  struct Candidate {
    double x;
    double change_sigmas;  // |step| across the interval in units of its noise
    int edge;              // index into edges; -1: not inside one
  };
  std::vector<Candidate> candidates;
  for (size_t i = 1; i < c.x.size(); ++i) {
    if (c.x[i] / c.x[i - 1] < min_ratio) continue;
    const double change = std::abs(c.log_y[i] - c.log_y[i - 1]) / std::hypot(c.sigma[i], c.sigma[i - 1]);
    // A change within noise says nothing about where a step is.
    if (change < 2) continue;
    const double midpoint = std::round(std::sqrt(c.x[i] * c.x[i - 1]) / granule) * granule;
    if (midpoint <= c.x[i - 1] || midpoint >= c.x[i] || measured(midpoint)) continue;
    candidates.push_back({midpoint, change, edge_of(c.x[i - 1], c.x[i])});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.change_sigmas > b.change_sigmas; });

  // Edges first, in turns: each edge's largest change, then each edge's
  // next, so that a budget cut short still leaves every capacity bracketed
  // as tightly as the others; then the changes outside edges (the ramps
  // and odd points the staircase reads no capacity from), largest first.
  std::vector<std::vector<const Candidate*>> by_edge(edges.size());
  std::vector<const Candidate*> ordered;
  for (const Candidate& cand : candidates)
    if (cand.edge >= 0) by_edge[static_cast<size_t>(cand.edge)].push_back(&cand);
  std::vector<size_t> edge_order(edges.size());
  std::iota(edge_order.begin(), edge_order.end(), size_t{0});
  std::stable_sort(edge_order.begin(), edge_order.end(), [&](size_t a, size_t b) {
    const double ca = by_edge[a].empty() ? 0.0 : by_edge[a].front()->change_sigmas;
    const double cb = by_edge[b].empty() ? 0.0 : by_edge[b].front()->change_sigmas;
    return ca > cb;
  });
  for (size_t turn = 0;; ++turn) {
    bool any = false;
    for (size_t e : edge_order) {
      if (turn < by_edge[e].size()) {
        ordered.push_back(by_edge[e][turn]);
        any = true;
      }
    }
    if (!any) break;
  }
  for (const Candidate& cand : candidates)
    if (cand.edge < 0) ordered.push_back(&cand);

  std::vector<double> footprints;
  for (const Candidate* cand : ordered) {
    if (footprints.size() >= max_points) break;
    footprints.push_back(cand->x);
  }
  return footprints;
}

}  // namespace gpuscope::analysis
