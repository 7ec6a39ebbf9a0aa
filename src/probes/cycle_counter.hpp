// Kernels that read their core's cycle counter where the device lets them
// (DeviceFeatures::cycle_counter), and the check that what they read counts
// cycles.
//
// The kernel parameter `counters=true` asks a family's kernel (clock/chain,
// sustain/fma_load) to read the counter: through NVIDIA inline PTX
// (%clock64, and %globaltimer for ns) in OpenCL C, through
// VK_KHR_shader_clock (clockARB(), subgroup scope, and clockRealtimeEXT()
// where the device has it) in GLSL.
#pragma once

#include "backends/backend.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace gpuscope {

struct CounterKernel {
  Kernel* kernel = nullptr;
  bool reads_counter = false;  // built with counters = true and the counter passed check_cycle_counter
  std::string counter;         // which counter and what it counts, for a series' method ("" without one)
  // The kernel's timer ticks are ns (NVIDIA's %globaltimer through PTX);
  // otherwise the timer's unit is the device's own, and rates are taken
  // over the launch's timestamps instead.
  bool timer_is_ns = false;
  // The timer's ticks per us as the counter check measured them (ticks over
  // a single-work-item launch's device time; 1000 where timer_is_ns), 0
  // where the kernel reads no timer. A many-wave launch's rate is the
  // counter's ticks over the timer's, times this: its device time is not
  // work-item 0's.
  double timer_mhz = 0;
  std::string note;            // why the counter is not read, where the device offers one
};

// Which counter kernels on a device of `f` read and what it counts ("" for
// none): a sentence for methods and notes.
std::string describe_cycle_counter(const DeviceFeatures& f, const std::string& vendor);

// One launch of clock/chain with counters: what the counters read around
// the chain and the launch's time from the API's timestamps.
struct CounterReading {
  uint64_t ticks = 0;         // the cycle counter's advance across the chain
  uint64_t timer_ticks = 0;   // the device's constant-rate timer across it (ns on NVIDIA); 0: no timer
  double launch_ns = 0;       // the launch's device time (timestamps)
};

// A reading in which a counter went backwards (its advance, as a signed
// 64-bit value, is negative): a torn read, not a clock's, such as a 64-bit
// counter read as two 32-bit halves whose low half wrapped between them
// (lavapipe's, about once per 2^32 ns).
bool torn_reading(const CounterReading& r);

// Whether readings of a cycle counter look like a cycle count, and the rate
// they imply. A counter is rejected (usable false, `why` says why) when it
// does not advance in some launch, advances faster than 20 GHz or slower
// than 1 MHz of the launch time (a wrap or a stuck counter), varies by more
// than 10x between launches of one length, goes backwards in most launches
// (a torn read; the few torn readings of a good counter are left out), or
// advances exactly as the
// device's timer does (within 0.1%: it is a timer, counting ns, not cycles;
// lavapipe reads the host's clock for both).
struct CounterVerdict {
  bool usable = false;
  std::string why;
  double mhz = 0;        // median ticks per launch us, where usable
  double timer_mhz = 0;  // median timer ticks per launch us, where usable and the kernel reads a timer
};
CounterVerdict judge_counter(std::span<const CounterReading> readings);

// How many of `readings` (torn ones left out) read the timer, and of those
// how many advanced within 0.1% of it: judge_counter's timer test.
struct TimerMatches {
  size_t timed = 0, matched = 0;
};
TimerMatches timer_matches(std::span<const CounterReading> readings);

// Runs clock/chain with counters a few times (a ~1 ms chain each; more
// where some readings match the timer and most do not) and judges what its
// counter reads; a device without the feature, or whose
// build fails, is not usable with the reason.
CounterVerdict check_cycle_counter(Device& dev);

// Builds `family`/`entry` with counters = true where the device's features
// offer a cycle counter, the build succeeds and check_cycle_counter accepts
// it, else with counters = false (the note says why, where a counter was
// offered).
CounterKernel build_counter_kernel(Device& dev, const std::string& family, const std::string& entry);

}  // namespace gpuscope
