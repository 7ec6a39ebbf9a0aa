// The measurement harness every probe times through: calibrate the work per
// launch so one launch lasts long enough to swamp timer resolution and launch
// jitter yet stays under a ceiling (mobile drivers kill long kernels), warm
// up, then take samples, more of them where they disagree. Every sample is
// kept; nothing here decides that a sample is "wrong".
#pragma once

#include "core/stats.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace gpuscope {

struct HarnessConfig {
  double target_launch_ms = 10;     // aim for timed launches of about this long
  double max_launch_ms = 200;       // never plan a launch longer than this
  int min_samples = 5;              // samples per point when they agree
  int max_samples = 11;             // upper bound when they do not
  double settle_rel_spread = 0.03;  // take more samples while MAD/median exceeds this
  int warmup_launches = 1;          // untimed launches at the calibrated size
};

// Work is a count of whatever unit the probe times (hops, bytes, ops); the
// harness only needs it to scale linearly with launch time.
using LaunchFn = std::function<double(uint64_t work)>;  // returns device ns

struct Measurement {
  uint64_t work_per_launch = 0;
  std::vector<double> ns_per_unit;  // one per timed launch, in launch order
  SampleSummary summary;            // of ns_per_unit
  double launch_ms = 0;             // median timed launch length
};

// Picks the work per launch: starts at `initial_work` and grows it until a
// launch lasts about target_launch_ms, never planning more than
// max_launch_ms, never exceeding `max_work`.
uint64_t calibrate(const LaunchFn& run, uint64_t initial_work, uint64_t max_work, const HarnessConfig& cfg);

// Calibrates, warms up and samples one point.
Measurement measure(const LaunchFn& run, uint64_t initial_work, uint64_t max_work, const HarnessConfig& cfg);

// Seconds on some clock; only differences mean anything.
using BudgetClock = std::function<double()>;

// The host's steady clock, in seconds: wall time.
inline double steady_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Time budget of one probe; probes spend refinement only while it lasts. It
// runs on the clock it is given: wall time by default, the device's budget
// clock (Device::budget_clock_s, through ProbeContext::budget()) in probes,
// which on the sim is modelled device time.
class TimeBudget {
 public:
  explicit TimeBudget(double seconds, BudgetClock clock = steady_clock_s)
      : seconds_(seconds), clock_(std::move(clock)), start_(clock_()) {}
  double elapsed_s() const { return clock_() - start_; }
  double remaining_s() const { return seconds_ - elapsed_s(); }
  bool exhausted() const { return remaining_s() <= 0; }
  double total_s() const { return seconds_; }

 private:
  double seconds_;
  BudgetClock clock_;
  double start_;
};

}  // namespace gpuscope
