// Probe `clock`: the clock the device actually runs at while working, which
// every per-cycle figure depends on (drivers report a maximum or nominal
// clock, and GPUs boost and throttle).
//
// Shape of the experiment, and why:
// - One work-item runs a dependent integer multiply-add chain (clock.cl)
//   long enough for a launch of ~10 ms; the host checks its final value.
// - On NVIDIA the kernel is built with inline PTX reading %clock64 (SM
//   cycles) and %globaltimer (ns) around the chain: cycles over ns is the
//   running clock, directly. Where the build fails (not NVIDIA, or PTX
//   refused) the plain chain runs instead.
// - Everywhere the chain's time per step comes from profiling events
//   (series clock.chain). Where no cycle counter exists, the analysis
//   assumes a step takes a whole number of cycles and reads the clock as
//   that number over the time per step, using the reported clock only to
//   pick the number; the interval says how much that assumption can be off.
#include "core/error.hpp"
#include "probes/cycle_counter.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {
namespace {

constexpr uint32_t kStepsPerRound = 16;
constexpr uint32_t kSeed = 0x2545F491u;

uint32_t host_chain(uint64_t steps) {
  uint32_t x = kSeed;
  const uint32_t c = kSeed | 1u;
  for (uint64_t i = 0; i < steps; ++i) x = x * x + c;
  return x;
}

}  // namespace

std::vector<Series> run_clock_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  TimeBudget budget(ctx.budget_s);
  // Named values, not a structured binding: the lambdas below capture them,
  // which clang before 16 refuses for bindings (the fuzz build's compiler).
  const CounterKernel counter = build_counter_kernel(dev, "clock", "chain");
  Kernel* const k = counter.kernel;
  const bool ptx = counter.reads_counter;
  const std::string& ptx_note = counter.note;
  auto out = dev.create_buffer(4 * sizeof(uint64_t));

  std::vector<double> mhz, cycles_per_step, event_mhz;
  auto once = [&](uint64_t rounds) {
    const KernelArg args[] = {out.get(), static_cast<uint32_t>(rounds), kSeed};
    const double ns = dev.launch(*k, Range::d1(1), Range::d1(1), args);
    const auto r = dev.read_values<uint64_t>(*out, 3);
    const uint64_t steps = rounds * kStepsPerRound;
    if (static_cast<uint32_t>(r[2]) != host_chain(steps))
      throw ValidationError(
          fmt::format("clock: chain of {} steps ended at {}, host says {}", steps, r[2], host_chain(steps)));
    if (ptx && r[1] > 0) {
      mhz.push_back(static_cast<double>(r[0]) / static_cast<double>(r[1]) * 1e3);
      cycles_per_step.push_back(static_cast<double>(r[0]) / static_cast<double>(steps));
      event_mhz.push_back(static_cast<double>(r[0]) / ns * 1e3);
    }
    return ns;
  };
  // Only the timed samples' counter readings are kept.
  const Measurement m = measure(
      [&](uint64_t rounds) {
        mhz.clear();
        cycles_per_step.clear();
        event_mhz.clear();
        return once(rounds);
      },
      64, UINT32_MAX, ctx.options.harness);
  mhz.clear();
  cycles_per_step.clear();
  event_mhz.clear();
  std::vector<double> step_ns;
  for (int i = 0; i < 7; ++i)
    step_ns.push_back(once(m.work_per_launch) / static_cast<double>(m.work_per_launch * kStepsPerRound));

  Series chain = make_series("clock.chain", "clock", {"work-items", ""}, {"time per dependent step", "ns"});
  add_point(chain, 1, step_ns);
  chain.meta = {{"kernel", "clock/chain"},
                {"op", "x = x * x + c (uint32, dependent)"},
                {"steps_per_launch", m.work_per_launch * kStepsPerRound},
                {"reported_clock_mhz", info.clock_mhz},
                {"wall_s", budget.elapsed_s()}};
  std::vector<Series> result{chain};
  if (ptx && !mhz.empty()) {
    Series counters = make_series("clock.counters", "clock", {"work-items", ""}, {"clock", "MHz"});
    add_point(counters, 1, mhz);
    counters.meta = {{"method", "%clock64 cycles / %globaltimer ns around the chain (inline PTX)"},
                     {"cycles_per_step", median(cycles_per_step)},
                     {"cycles_over_event_ns_mhz", median(event_mhz)},
                     {"wall_s", budget.elapsed_s()}};
    result.push_back(counters);
    ctx.progress(fmt::format("clock: {:.0f} MHz from the SM's counters ({:.2f} cycles per step)", median(mhz),
                             median(cycles_per_step)));
  } else {
    if (!ptx_note.empty()) result.front().meta["note"] = ptx_note;
    ctx.progress(fmt::format("clock: {:.3f} ns per dependent step", median(step_ns)));
  }
  return result;
}

}  // namespace gpuscope
