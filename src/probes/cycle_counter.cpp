#include "probes/cycle_counter.hpp"

#include "core/error.hpp"
#include "core/stats.hpp"
#include "kernels/clock_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuscope {
namespace {

constexpr double kMinMhz = 1, kMaxMhz = 20000;
constexpr double kMaxSpread = 10;      // fastest over slowest launch's rate
constexpr double kTimerMatch = 1e-3;   // |ticks / timer ticks - 1| under this: the counter is the timer
constexpr double kCheckLaunchNs = 1e6;
constexpr uint32_t kCheckSeed = 0x9E3779B9u;
// Readings the check takes, and takes in all where they split on the timer.
constexpr size_t kReadings = 5, kSplitReadings = 15;
// Most rounds one check launch runs: within lavapipe's loop limit, since the
// chain does 16 rounds per loop iteration (src/kernels/vulkan/README.md).
constexpr uint32_t kMaxCheckRounds = 1000000;

std::string first_line(const std::string& s) {
  const auto end = s.find('\n');
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace

std::string describe_cycle_counter(const DeviceFeatures& f, const std::string& vendor) {
  if (!f.cycle_counter) return "";
  if (f.inline_asm == "nvidia-ptx") return "%clock64 through NVIDIA inline PTX: the SM's cycle counter";
  const bool nvidia = vendor.find("NVIDIA") != std::string::npos;
  return std::string("the shader clock at subgroup scope (clockARB(), VK_KHR_shader_clock)") +
         (nvidia ? ": on NVIDIA the SM's cycle counter (SM clock)"
                 : ": the compute unit's cycles where the driver implements it as a cycle counter");
}

bool torn_reading(const CounterReading& r) {
  return static_cast<int64_t>(r.ticks) < 0 || static_cast<int64_t>(r.timer_ticks) < 0;
}

CounterVerdict judge_counter(std::span<const CounterReading> all) {
  CounterVerdict v;
  if (all.empty()) {
    v.why = "no launch read the counter";
    return v;
  }
  // Torn readings are left out; most of them torn rejects the counter.
  std::vector<CounterReading> readings;
  for (const CounterReading& r : all)
    if (!torn_reading(r)) readings.push_back(r);
  if (2 * readings.size() <= all.size()) {
    v.why = fmt::format("the counter went backwards in {} of {} launches: it wrapped, or its halves are read apart",
                        all.size() - readings.size(), all.size());
    return v;
  }
  // A counter that counts what the timer counts is a timer whatever the
  // launches' times say (a loaded host stretches lavapipe's launches around
  // the chain): that is told first.
  for (const CounterReading& r : readings) {
    if (r.ticks == 0) {
      v.why = fmt::format("the counter did not advance across a chain of {:.0f} us: it is stuck or absent",
                          r.launch_ns / 1e3);
      return v;
    }
    if (!(r.launch_ns > 0)) {
      v.why = "a launch had no device time to compare the counter with";
      return v;
    }
  }
  const auto [timed, as_timer] = timer_matches(readings);
  // A majority, not every reading: where the host preempts the shader's
  // thread between its reads of the two clocks (lavapipe under ctest -j2),
  // one reading in several drifts apart, while a real cycle counter keeps
  // within 0.1% of the ns timer only by a coincidence of its clock.
  if (timed > 0 && 2 * as_timer > timed) {
    v.why = fmt::format("it advances exactly as the device's real-time clock does ({} and {} ticks across one "
                        "chain): it is a timer counting ns, not a cycle counter",
                        readings.back().ticks, readings.back().timer_ticks);
    return v;
  }
  std::vector<double> mhz;
  for (const CounterReading& r : readings) {
    const double rate = static_cast<double>(r.ticks) / r.launch_ns * 1e3;
    if (rate > kMaxMhz || rate < kMinMhz) {
      v.why = fmt::format("the counter advanced {} ticks in a launch of {:.0f} us ({:.4g} MHz, outside {:g} to {:g} "
                          "MHz): it wrapped, or it is not a clock",
                          r.ticks, r.launch_ns / 1e3, rate, kMinMhz, kMaxMhz);
      return v;
    }
    mhz.push_back(rate);
  }
  const auto [lo, hi] = std::minmax_element(mhz.begin(), mhz.end());
  if (*hi > kMaxSpread * *lo) {
    v.why = fmt::format("the counter's rate varied from {:.4g} to {:.4g} MHz between launches of one chain: not a "
                        "steady clock",
                        *lo, *hi);
    return v;
  }
  v.usable = true;
  v.mhz = median(mhz);
  std::vector<double> timer_mhz;
  for (const CounterReading& r : readings)
    if (r.timer_ticks > 0) timer_mhz.push_back(static_cast<double>(r.timer_ticks) / r.launch_ns * 1e3);
  if (!timer_mhz.empty()) v.timer_mhz = median(timer_mhz);
  return v;
}

TimerMatches timer_matches(std::span<const CounterReading> readings) {
  TimerMatches m;
  for (const CounterReading& r : readings) {
    if (torn_reading(r) || r.timer_ticks == 0) continue;
    ++m.timed;
    const double ratio = static_cast<double>(r.ticks) / static_cast<double>(r.timer_ticks);
    if (std::abs(ratio - 1) < kTimerMatch) ++m.matched;
  }
  return m;
}

CounterVerdict check_cycle_counter(Device& dev) {
  const DeviceInfo& info = dev.info();
  if (!info.features.cycle_counter) return {false, "the device offers kernels no cycle counter", 0};
  Kernel* k = nullptr;
  try {
    k = &dev.kernel({"clock", "chain", {{"counters", true}}});
  } catch (const BuildError& e) {
    return {false, "the counter kernel did not build: " + first_line(e.what()), 0};
  } catch (const Unsupported& e) {
    return {false, e.what(), 0};
  }
  auto out = dev.create_buffer(3 * sizeof(uint64_t));
  std::vector<CounterReading> readings;
  uint32_t rounds = 64;
  // The first launch is a warm-up: drivers that compile or page in on first
  // use (lavapipe) spend its time outside the chain. kReadings readings,
  // kSplitReadings where some match the timer and most do not (against
  // judge_counter's majority): a timer whose reads the host interrupted, or
  // a counter that matched it by chance, which more readings tell apart.
  size_t want = kReadings;
  for (int launches = 0; launches < 60 && readings.size() < want; ++launches) {
    const KernelArg args[] = {out.get(), rounds, kCheckSeed};
    const double ns = dev.launch(*k, Range::d1(1), Range::d1(1), args);
    const auto r = dev.read_values<uint64_t>(*out, 3);
    const uint64_t steps = uint64_t{rounds} * clock_twin::kStepsPerRound;
    if (static_cast<uint32_t>(r[2]) != clock_twin::chain_value(kCheckSeed, steps))
      throw ValidationError(fmt::format("clock: the counter check's chain of {} steps ended at {}, host says {}", steps,
                                        r[2], clock_twin::chain_value(kCheckSeed, steps)));
    if (launches == 0) continue;
    if (ns < kCheckLaunchNs && rounds < kMaxCheckRounds) {
      rounds = std::min(kMaxCheckRounds, rounds * 4);
      continue;
    }
    readings.push_back({r[0], r[1], ns});
    if (readings.size() == kReadings && want == kReadings) {
      const TimerMatches m = timer_matches(readings);
      if (m.matched > 0 && 2 * m.matched <= m.timed) want = kSplitReadings;
    }
  }
  return judge_counter(readings);
}

CounterKernel build_counter_kernel(Device& dev, const std::string& family, const std::string& entry) {
  CounterKernel c;
  const DeviceInfo& info = dev.info();
  const std::string counter = describe_cycle_counter(info.features, info.vendor);
  if (info.features.cycle_counter) {
    const CounterVerdict v = check_cycle_counter(dev);
    if (v.usable) {
      try {
        c.kernel = &dev.kernel({family, entry, {{"counters", true}}});
        c.reads_counter = true;
        c.counter = counter;
        c.timer_is_ns = info.features.inline_asm == "nvidia-ptx";
        c.timer_mhz = c.timer_is_ns ? 1000 : v.timer_mhz;
        return c;
      } catch (const BuildError& e) {
        c.note = "the cycle counter is unavailable: " + first_line(e.what());
      }
    } else {
      c.note = "the cycle counter (" + counter + ") is not used: " + v.why;
    }
  }
  c.kernel = &dev.kernel({family, entry, {{"counters", false}}});
  return c;
}

}  // namespace gpuscope
