#include "harness/harness.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope {

namespace {
constexpr double kNsPerMs = 1e6;
}

uint64_t calibrate(const LaunchFn& run, uint64_t initial_work, uint64_t max_work, const HarnessConfig& cfg) {
  uint64_t work = std::clamp<uint64_t>(initial_work, 1, std::max<uint64_t>(max_work, 1));
  const double target_ns = cfg.target_launch_ms * kNsPerMs;
  const double ceiling_ns = cfg.max_launch_ms * kNsPerMs;
  for (int step = 0; step < 12; ++step) {
    double t = std::max(run(work), 1.0);
    // A kernel's first launch can carry one-time work inside its timed span
    // (lavapipe compiles the pipeline at its first dispatch: 6.7 ms for a
    // divergence launch whose work takes 0.05 ms, on the CI VM), so a first
    // launch of half the target or more, which would settle the work by
    // itself, is timed again and the shorter time kept. Shorter first
    // launches are not: probes size them at about an eighth of the target,
    // and timing each twice would cost every probe a launch per point.
    if (step == 0 && t > target_ns / 2) t = std::min(t, std::max(run(work), 1.0));
    // Growth per step is capped at 16x: time per unit can change with the
    // amount of work (a footprint leaving a cache), and a short first launch
    // must not be extrapolated into one far past the ceiling.
    const double scale = std::clamp(target_ns / t, 1.0 / 16, 16.0);
    const auto planned = static_cast<uint64_t>(std::llround(static_cast<double>(work) * scale));
    // Never plan past the ceiling (with a factor of 2 margin for jitter).
    const auto safe = static_cast<uint64_t>(static_cast<double>(work) * (ceiling_ns / 2) / t);
    const uint64_t next = std::clamp<uint64_t>(std::min(planned, safe), 1, max_work);
    const bool close = t > target_ns / 2 && t < target_ns * 2;
    if (close || next == work) return work;
    // Once the time is long enough to trust, one proportional step lands it.
    if (t > target_ns / 16) return next;
    work = next;
  }
  return work;
}

Measurement measure(const LaunchFn& run, uint64_t initial_work, uint64_t max_work, const HarnessConfig& cfg) {
  Measurement m;
  m.work_per_launch = calibrate(run, initial_work, max_work, cfg);
  for (int i = 0; i < cfg.warmup_launches; ++i) run(m.work_per_launch);
  std::vector<double> launch_ns;
  const auto per_unit = static_cast<double>(m.work_per_launch);
  while (static_cast<int>(m.ns_per_unit.size()) < cfg.max_samples) {
    const double t = run(m.work_per_launch);
    launch_ns.push_back(t);
    m.ns_per_unit.push_back(t / per_unit);
    if (static_cast<int>(m.ns_per_unit.size()) >= cfg.min_samples &&
        summarize(m.ns_per_unit).rel_spread <= cfg.settle_rel_spread)
      break;
  }
  m.summary = summarize(m.ns_per_unit);
  m.launch_ms = median(launch_ns) / kNsPerMs;
  return m;
}

}  // namespace gpuscope
