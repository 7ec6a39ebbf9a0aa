// The caches as the host itself shows them right now: the tests that set a
// CPU device's cache findings against Linux's sizes read the host's own
// chase beside the device's, since co-tenants of a cloud VM move what both
// can see (the L3's share, an SMT sibling in the L2) from one minute to the
// next.
#pragma once

#include "analysis/analyze.hpp"
#include "bench/host_chase.hpp"
#include "core/results.hpp"
#include "core/stats.hpp"

namespace gpuscope::test {

// The host's own chase (bench/host_chase.hpp) over every footprint of
// `probe`'s latency curve, on `pages` (as the device's buffers get them),
// each point read as the probe reads one (the 10th percentile of its
// samples, kLatencyQuantile in src/probes/latency.cpp) and the curve by the
// same analysis. No findings where `probe` has no latency curve.
inline Results native_reading(const Results& probe, host_chase::Pages pages) {
  constexpr int kRounds = 15;
  constexpr double kRoundNs = 4e6;
  Results native;
  native.device = probe.device;
  const Series* measured = probe.find_series("latency.global");
  if (!measured) return native;
  Series curve = *measured;
  curve.meta = {{"chase_method", "Chased natively on the host (bench/host_chase.hpp)."}};
  for (Point& p : curve.points) {
    p.samples = host_chase::time_footprint(static_cast<size_t>(p.x), pages, kRounds, kRoundNs);
    p.y = quantile(p.samples, 0.1);
  }
  native.series = {curve};
  native.findings = analysis::analyze_all(native);
  return native;
}

}  // namespace gpuscope::test
