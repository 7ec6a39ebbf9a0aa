// What a latency run on a CPU device (PoCL, lavapipe) must hold whatever
// the host's caches hold that minute: a curve with every point sampled, and
// an analysis that accounts for each finding the curve should give. Which
// sizes it reads moves with the host's co-tenants: bench/pocl_caches.sh and
// bench/lavapipe_caches.sh report those, and tests/recorded/ holds the
// analysis of curves recorded on such hosts.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gpuscope::test {

// Whether `id` is found or listed as unfound with a reason.
inline bool accounted_for(const Results& r, const std::string& id) {
  if (r.find_finding(id)) return true;
  return std::any_of(r.unfound.begin(), r.unfound.end(),
                     [&](const Unfound& u) { return u.id == id && !u.reason.empty(); });
}

// The latency probe's curve: at least `min_points` footprints, each with at
// least `min_samples` positive samples; the staircase read from it: at
// least one level, its L1 plateau, and for every level its capacity and
// latency, and DRAM's latency, found or unfound with a reason; every
// memory level's finding drawn from the curve.
inline void expect_latency_run(const Results& r, size_t min_points, size_t min_samples) {
  const Series* s = r.find_series("latency.global");
  ASSERT_NE(s, nullptr) << "no latency.global series";
  EXPECT_GE(s->points.size(), min_points);
  for (const Point& p : s->points) {
    EXPECT_GE(p.samples.size(), min_samples) << p.x << " B";
    EXPECT_GT(p.y, 0) << p.x << " B";
  }
  const Finding* levels = r.find_finding("memory.cache_levels");
  ASSERT_NE(levels, nullptr) << "the staircase fit accepted no plateau";
  EXPECT_GE(number(*levels), 1);
  EXPECT_NE(r.find_finding("memory.L1.latency_ns"), nullptr);
  EXPECT_TRUE(accounted_for(r, "memory.dram.latency_ns"));
  for (int n = 1; n <= static_cast<int>(number(*levels)); ++n) {
    for (const char* what : {"capacity_bytes", "latency_ns"}) {
      const std::string id = "memory.L" + std::to_string(n) + "." + what;
      EXPECT_TRUE(accounted_for(r, id)) << id;
      if (const Finding* f = r.find_finding(id)) {
        EXPECT_NE(std::find(f->evidence.begin(), f->evidence.end(), "latency.global"), f->evidence.end()) << id;
      }
    }
  }
}

}  // namespace gpuscope::test
