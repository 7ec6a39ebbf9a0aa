// Probe `clock`: the clock the device actually runs at while working, which
// every per-cycle figure depends on (drivers report a maximum or nominal
// clock, and GPUs boost and throttle).
//
// Shape of the experiment, and why:
// - One work-item runs a dependent integer multiply-add chain (clock.cl)
//   long enough for a launch of ~10 ms; the host checks its final value.
// - Where the device offers kernels a cycle counter (DeviceFeatures::
//   cycle_counter) that passes check_cycle_counter, the kernel reads it
//   around the chain: on NVIDIA through OpenCL, %clock64 (SM cycles) and
//   %globaltimer (ns), cycles over ns being the running clock directly;
//   through Vulkan, the subgroup clock (clockARB(); the SM clock on NVIDIA),
//   whose ticks over the launch's timestamp-query ns are the running clock.
//   A counter that does not advance, runs at no plausible rate or counts
//   the same as the device's timer (lavapipe: both read the host's ns
//   clock) is not used, and the chain's note says why. The timed readings
//   are judged again before they become a clock.
// - Everywhere the chain's time per step comes from the API's timestamps
//   (series clock.chain). Where no cycle counter is used, the analysis
//   assumes a step takes a whole number of cycles and reads the clock as
//   that number over the time per step, using the reported clock only to
//   pick the number; the interval says how much that assumption can be off.
#include "core/error.hpp"
#include "kernels/clock_twin.hpp"
#include "probes/cycle_counter.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {
namespace {

constexpr uint32_t kStepsPerRound = clock_twin::kStepsPerRound;
constexpr uint32_t kSeed = 0x2545F491u;

uint32_t host_chain(uint64_t steps) { return clock_twin::chain_value(kSeed, steps); }

}  // namespace

std::vector<Series> run_clock_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  TimeBudget budget = ctx.budget();
  // Named values, not a structured binding: the lambdas below capture them,
  // which clang before 16 refuses for bindings (the fuzz build's compiler).
  const CounterKernel counter = build_counter_kernel(dev, "clock", "chain");
  Kernel* const k = counter.kernel;
  const bool reads = counter.reads_counter;
  const bool timer_ns = counter.timer_is_ns;
  auto out = dev.create_buffer(4 * sizeof(uint64_t));

  std::vector<CounterReading> readings;
  auto once = [&](uint64_t rounds) {
    const KernelArg args[] = {out.get(), static_cast<uint32_t>(rounds), kSeed};
    const double ns = dev.launch(*k, Range::d1(1), Range::d1(1), args);
    const auto r = dev.read_values<uint64_t>(*out, 3);
    const uint64_t steps = rounds * kStepsPerRound;
    if (static_cast<uint32_t>(r[2]) != host_chain(steps))
      throw ValidationError(
          fmt::format("clock: chain of {} steps ended at {}, host says {}", steps, r[2], host_chain(steps)));
    if (reads) readings.push_back({r[0], r[1], ns});
    return ns;
  };
  // Only the timed samples' counter readings are kept.
  const Measurement m = measure(
      [&](uint64_t rounds) {
        readings.clear();
        return once(rounds);
      },
      64, UINT32_MAX, ctx.options.harness);
  readings.clear();
  std::vector<double> step_ns;
  for (int i = 0; i < 7; ++i)
    step_ns.push_back(once(m.work_per_launch) / static_cast<double>(m.work_per_launch * kStepsPerRound));
  const double steps = static_cast<double>(m.work_per_launch * kStepsPerRound);

  Series chain = make_series("clock.chain", "clock", {"work-items", ""}, {"time per dependent step", "ns"});
  add_point(chain, 1, step_ns);
  chain.meta = {{"kernel", "clock/chain"},
                {"op", "x = x * x + c (uint32, dependent)"},
                {"steps_per_launch", m.work_per_launch * kStepsPerRound},
                {"reported_clock_mhz", info.clock_mhz},
                {"wall_s", budget.elapsed_s()}};
  std::vector<Series> result{chain};
  const CounterVerdict verdict = reads ? judge_counter(readings) : CounterVerdict{};
  if (reads && verdict.usable) {
    std::vector<double> mhz, cycles_per_step, event_mhz, per_timer_tick;
    for (const CounterReading& r : readings) {
      if (torn_reading(r)) continue;
      const auto ticks = static_cast<double>(r.ticks);
      event_mhz.push_back(ticks / r.launch_ns * 1e3);
      cycles_per_step.push_back(ticks / steps);
      if (r.timer_ticks > 0) per_timer_tick.push_back(ticks / static_cast<double>(r.timer_ticks));
      mhz.push_back(timer_ns && r.timer_ticks > 0 ? ticks / static_cast<double>(r.timer_ticks) * 1e3
                                                  : event_mhz.back());
    }
    Series counters = make_series("clock.counters", "clock", {"work-items", ""}, {"clock", "MHz"});
    add_point(counters, 1, mhz);
    counters.meta = {
        {"method", timer_ns ? "%clock64 cycles / %globaltimer ns around the chain (inline PTX)"
                            : counter.counter + "; its ticks across the chain over the launch's device time "
                                                "(timestamp queries)"},
        {"counter", counter.counter},
        {"cycles_per_step", median(cycles_per_step)},
        {"cycles_over_event_ns_mhz", median(event_mhz)},
        {"wall_s", budget.elapsed_s()}};
    // The device's timer where its unit is not known to be ns: the ratio is
    // kept for the record, not read as a clock.
    if (!timer_ns && !per_timer_tick.empty()) counters.meta["ticks_per_device_timer_tick"] = median(per_timer_tick);
    result.push_back(counters);
    ctx.progress(fmt::format("clock: {:.0f} MHz from the cycle counter ({:.2f} cycles per step)", median(mhz),
                             median(cycles_per_step)));
  } else {
    if (reads) result.front().meta["note"] = "the cycle counter (" + counter.counter + ") is not used: " + verdict.why;
    else if (!counter.note.empty()) result.front().meta["note"] = counter.note;
    ctx.progress(fmt::format("clock: {:.3f} ns per dependent step", median(step_ns)));
  }
  return result;
}

}  // namespace gpuscope
