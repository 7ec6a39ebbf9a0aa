// Probe `sustain`: what the device does under a load longer than a
// microbenchmark's launch, and between launches (the Mali-G52 article's
// power-management study: clock steps, DVFS, sustained load).
//
// Shape of the experiment, and why:
// - The load is sustain.cl: every work-item runs 8 independent fma chains;
//   compute units x 2048 work-items fill every GPU so far. A launch is sized
//   to ~25 ms (an eighth of the launch cap at most), so the watchdog never
//   sees a long kernel, and launches follow back to back for --sustain-s
//   seconds. Before it the device idles for a second, so the first launches
//   show the clock's ramp from idle.
// - Per launch: throughput from its profiling events, and where kernels can
//   read a cycle counter (probes/cycle_counter.hpp) the clock from work-item
//   0's counter across its chains (the clock probe's method): over
//   %globaltimer's ns on NVIDIA's OpenCL, over the launch's timestamps
//   elsewhere (work-item 0 runs the whole launch: every work-item is resident
//   at once). Elsewhere the analysis reads the clock from throughput.
// - Time axis: the launches' summed device time plus the idle the probe
//   inserted (the host's few microseconds between launches left out, 0.1% of
//   a 25 ms launch), so a simulated device, whose launches take no wall time,
//   sees the same timeline.
// - Each launch is also timed on the device's budget clock (wall time; the
//   sim's modelled time), and once the device's timestamps miss nearly all
//   of a launch, that clock times every launch instead, for sizing,
//   throughput and the time axis alike: lavapipe's timestamps stop bracketing compute work once its
//   context has run a render pass (the graphics probes), reading ~80 us for a
//   launch of seconds, and launches sized and summed by them grew to the
//   largest round count and ran for hours before the summed time reached
//   --sustain-s. The load also ends after kMaxLoadOverrun x --sustain-s on
//   the budget clock whatever the device's clock says.
// - Meanwhile a second thread reads the driver's facts (clock, temperature,
//   power, throttle reasons) every 200 ms on the same time axis (wall time
//   since the load began).
// - Then single short launches (~2 ms) after idle gaps of 0 to 300 ms: a
//   clock that falls between launches (DVFS) shows as a slower launch.
#include "core/error.hpp"
#include "kernels/sustain_twin.hpp"
#include "probes/cycle_counter.hpp"
#include "kernels/fma_forms.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

namespace gpuscope {
namespace {

constexpr float kA = 0.9999f, kB = 1e-5f;
constexpr uint32_t kFmasPerRound = 64;
constexpr double kIdleBeforeS = 1.0;
constexpr double kDriverPeriodS = 0.2;
// Points a series holds at most: longer loads put several launches in a point.
constexpr size_t kMaxPoints = 2000;
const std::vector<double> kGapsMs = {0, 1, 10, 100, 300};
constexpr int kGapRepeats = 3;
// A launch's device time under this share of its host-side time means the
// device's timestamps miss nearly all of it: a real launch's host time is
// its device time plus tens of microseconds of API cost (a GPU waking from
// idle adds a few ms at most), where lavapipe's missed launches read 1e-4.
constexpr double kMinTimestampShare = 0.1;
// ... judged only on launches of at least this much host time, in ns, so
// that the API cost of a short launch is never the gap.
constexpr double kTimestampCheckFloorNs = 1e6;
// The load ends after this many times --sustain-s on the budget clock
// however little time the device's clock has counted: a bound on the loop
// that does not rest on the clock being measured.
constexpr double kMaxLoadOverrun = 3;

struct DriverSample {
  double t_s = 0;
  std::vector<DriverSnapshot> snaps;
};

// Reads the driver's facts every kDriverPeriodS on its own thread.
class DriverSampler {
 public:
  explicit DriverSampler(std::function<std::vector<DriverSnapshot>()> read) : read_(std::move(read)) {}
  void start(std::chrono::steady_clock::time_point t0) {
    if (!read_) return;
    t0_ = t0;
    thread_ = std::thread([this] {
      while (!stop_) {
        const auto next = std::chrono::steady_clock::now() + std::chrono::duration<double>(kDriverPeriodS);
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        auto snaps = read_();
        {
          std::lock_guard lock(mutex_);
          samples_.push_back({t, std::move(snaps)});
        }
        std::this_thread::sleep_until(next);
      }
    });
  }
  std::vector<DriverSample> stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    return samples_;
  }
  ~DriverSampler() { stop(); }

 private:
  std::function<std::vector<DriverSnapshot>()> read_;
  std::chrono::steady_clock::time_point t0_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<DriverSample> samples_;
};

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Puts (t, value) pairs into at most kMaxPoints points: consecutive values
// share a point at their middle time, every value kept as a sample.
void add_binned(Series& s, const std::vector<std::pair<double, double>>& tv) {
  const size_t per = std::max<size_t>(1, (tv.size() + kMaxPoints - 1) / kMaxPoints);
  for (size_t i = 0; i < tv.size(); i += per) {
    const size_t end = std::min(tv.size(), i + per);
    std::vector<double> v;
    for (size_t k = i; k < end; ++k) v.push_back(tv[k].second);
    add_point(s, 0.5 * (tv[i].first + tv[end - 1].first), v);
  }
}

}  // namespace

std::vector<Series> run_sustain_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  const HarnessConfig& h = ctx.options.harness;
  const double sustain_s = ctx.options.sustain_s;
  // Named values, not a structured binding: the lambdas below capture them,
  // which clang before 16 refuses for bindings (the fuzz build's compiler).
  const CounterKernel counter = build_counter_kernel(dev, "sustain", "fma_load");
  Kernel* const k = counter.kernel;
  const bool reads = counter.reads_counter;
  const bool timer_ns = counter.timer_is_ns;
  const double timer_mhz = counter.timer_mhz;
  const std::string& counter_note = counter.note;
  const size_t local = std::min<size_t>(256, k->max_work_group_size());
  const size_t items = std::max<size_t>(1, info.compute_units) * 2048 / local * local;
  auto out = dev.create_buffer(items * sizeof(float));
  auto clock = dev.create_buffer(2 * sizeof(uint64_t));

  struct Launch {
    double ns = 0;   // the launch's time: the device's, or the budget clock's where the device's misses it
    double mhz = 0;  // 0 without counters
  };
  // Set by a calibration or load launch whose device time misses nearly
  // all of its host time; from then on every launch is timed by the host.
  // The gap launches never set it: a clock waking from idle is what they
  // measure, on the device's own time.
  bool timestamps_miss = false;
  enum class Judge { yes, no };
  auto launch = [&](uint32_t rounds, Judge judge = Judge::yes) {
    const KernelArg args[] = {out.get(), clock.get(), rounds, kA, kB};
    Launch l;
    const double t0_s = dev.budget_clock_s();
    l.ns = dev.launch(*k, Range::d1(items), Range::d1(local), args);
    const double host_ns = (dev.budget_clock_s() - t0_s) * 1e9;
    if (judge == Judge::yes && host_ns >= kTimestampCheckFloorNs && l.ns < kMinTimestampShare * host_ns)
      timestamps_miss = true;
    if (timestamps_miss) l.ns = host_ns;
    if (reads) {
      // Work-item 0's counter ticks over its timer ticks, on the timer's
      // measured rate; a torn reading gives this launch no clock (mhz 0).
      const auto c = dev.read_values<uint64_t>(*clock, 2);
      if (c[0] > 0 && c[1] > 0 && timer_mhz > 0 && !torn_reading({c[0], c[1], l.ns}))
        l.mhz = static_cast<double>(c[0]) / static_cast<double>(c[1]) * timer_mhz;
    }
    return l;
  };
  auto check = [&](uint32_t rounds) {
    const auto got = dev.read_values<float>(*out, items);
    for (uint32_t gid : {uint32_t{0}, uint32_t{1}, uint32_t{63}, static_cast<uint32_t>(items - 1)}) {
      auto near = [&](float want) { return std::abs(got[gid] - want) <= 1e-6f * std::abs(want); };
      const float fused = sustain_twin::item_result(gid, rounds, kA, kB, FmaForm::fused);
      const float unfused = sustain_twin::item_result(gid, rounds, kA, kB, FmaForm::unfused);
      if (!near(fused) && !near(unfused))
        throw ValidationError(fmt::format("sustain: work-item {} ended at {}, the host says {} (fused) or {} "
                                          "(unfused) ({} rounds)",
                                          gid, got[gid], fused, unfused, rounds));
    }
  };
  // Rounds for a launch of `ms`, from one calibrated launch.
  const double load_ms = std::clamp(h.max_launch_ms / 8, 1.0, 25.0);
  const double short_ms = std::min(2.0, load_ms);
  uint32_t rounds = 4;
  // Untimed first: a first launch may carry the driver's compile of the
  // kernel (PoCL compiles at the first enqueue), seconds no timestamp sees.
  launch(rounds, Judge::no);
  double ns = launch(rounds).ns;
  const auto max_rounds = static_cast<double>(loop_trip_cap(info.features, 1u << 28, 8));
  while (ns < 0.3 * load_ms * 1e6 && rounds < max_rounds) {
    rounds = static_cast<uint32_t>(
        std::min<double>(rounds * std::clamp(0.5 * load_ms * 1e6 / std::max(ns, 1.0), 2.0, 64.0), max_rounds));
    ns = launch(rounds).ns;
  }
  const auto scaled = [&](double ms) {
    return static_cast<uint32_t>(std::clamp(rounds * ms * 1e6 / ns, 1.0, max_rounds));
  };
  const uint32_t load_rounds = scaled(load_ms), short_rounds = scaled(short_ms);
  launch(short_rounds);
  check(short_rounds);
  const double flops_per_round = static_cast<double>(items) * kFmasPerRound * 2;

  // The load, after an idle second.
  sleep_s(kIdleBeforeS);
  DriverSampler sampler(ctx.driver_facts);
  sampler.start(std::chrono::steady_clock::now());
  std::vector<std::pair<double, double>> gflops, mhz;
  double t = 0;
  size_t launches = 0;
  const TimeBudget load_bound = ctx.budget_for(kMaxLoadOverrun * sustain_s);
  while (t < sustain_s && !load_bound.exhausted()) {
    const Launch l = launch(load_rounds);
    const double mid = t + 0.5 * l.ns * 1e-9;
    t += l.ns * 1e-9;
    ++launches;
    gflops.emplace_back(mid, flops_per_round * load_rounds / l.ns);
    if (l.mhz > 0) mhz.emplace_back(mid, l.mhz);
    ctx.progress_fraction(0.8 * t / sustain_s);
  }
  check(load_rounds);

  // Single short launches after idle gaps.
  Series gap_tp = make_series("sustain.gap.throughput", "sustain", {"idle before the launch", "ms"},
                              {"throughput", "GFLOP/s"});
  Series gap_clk =
      make_series("sustain.gap.clock", "sustain", {"idle before the launch", "ms"}, {"clock", "MHz"});
  for (double gap : kGapsMs) {
    std::vector<double> tp, clk;
    for (int rep = 0; rep < kGapRepeats; ++rep) {
      if (gap > 0) sleep_s(gap * 1e-3);
      const Launch l = launch(short_rounds, Judge::no);
      tp.push_back(flops_per_round * short_rounds / l.ns);
      if (l.mhz > 0) clk.push_back(l.mhz);
    }
    add_point(gap_tp, gap, tp);
    if (!clk.empty()) add_point(gap_clk, gap, clk);
  }
  check(short_rounds);
  const auto driver = sampler.stop();

  const nlohmann::json common = {{"kernel", "sustain/fma_load"},
                                 {"work_items", items},
                                 {"local_size", local},
                                 {"flops_per_launch", flops_per_round * load_rounds},
                                 {"launch_ms_planned", load_ms},
                                 {"launches", launches},
                                 {"idle_before_s", kIdleBeforeS},
                                 {"sustain_s", sustain_s},
                                 {"time_axis", "summed device time of the launches since the load began"},
                                 {"x_scale", "linear"}};
  std::vector<Series> result;
  Series tp = make_series("sustain.throughput", "sustain", {"time", "s"}, {"throughput", "GFLOP/s"});
  add_binned(tp, gflops);
  tp.meta = common;
  tp.meta["method"] = "fp32 fma chains, 8 per work-item; flops over each launch's profiling-event time";
  if (timestamps_miss) {
    tp.meta["note"] = fmt::format(
        "the device's timestamps missed nearly all of a launch (under {:.0f}% of the host's time, on a launch of "
        "{:.0f} ms or more), so from then on the launches were timed, sized and put on the time axis by the "
        "host's clock",
        100 * kMinTimestampShare, kTimestampCheckFloorNs * 1e-6);
  } else if (!counter_note.empty()) {
    tp.meta["note"] = counter_note;
  } else if (reads && !(timer_mhz > 0)) {
    tp.meta["note"] = "the cycle counter is read, but kernels read no device timer beside it "
                      "(clockRealtimeEXT()): a many-wave launch's time is not work-item 0's, so the clock is "
                      "read from throughput";
  }
  result.push_back(std::move(tp));
  if (!mhz.empty()) {
    Series c = make_series("sustain.clock", "sustain", {"time", "s"}, {"clock", "MHz"});
    add_binned(c, mhz);
    c.meta = common;
    c.meta["method"] = timer_ns ? "%clock64 cycles / %globaltimer ns around work-item 0's chains (inline PTX)"
                                : counter.counter + "; work-item 0's ticks across its chains over its device "
                                                    "timer's (clockRealtimeEXT()) ticks, at the timer's rate the "
                                                    "counter check measured (" +
                                                    fmt::format("{:.1f}", timer_mhz) + " MHz)";
    result.push_back(std::move(c));
  }
  gap_tp.meta = {{"kernel", "sustain/fma_load"},
                 {"launch_ms_planned", short_ms},
                 {"repeats", kGapRepeats},
                 {"method", "one short launch after each idle gap, right after the load"}};
  result.push_back(std::move(gap_tp));
  if (!gap_clk.points.empty()) {
    gap_clk.meta = result.back().meta;
    result.push_back(std::move(gap_clk));
  }
  // The driver's curves on the load's time axis.
  struct Curve {
    const char* key;
    const char* id;
    Axis y;
  };
  for (const Curve& c :
       {Curve{"clock.current_mhz", "sustain.driver.clock_mhz", {"clock (driver)", "MHz"}},
        Curve{"temperature_c", "sustain.driver.temperature_c", {"temperature (driver)", "C"}},
        Curve{"power_w", "sustain.driver.power_w", {"power (driver)", "W"}}}) {
    Series s = make_series(c.id, "sustain", {"time", "s"}, c.y);
    std::string source;
    nlohmann::json reasons = nlohmann::json::array();
    for (const auto& d : driver)
      for (const auto& snap : d.snaps)
        if (const DriverFact* f = snap.find(c.key); f && f->value.is_number()) {
          const double v = f->value.get<double>();
          if (std::isfinite(v) && v >= 0 && (s.points.empty() || d.t_s > s.points.back().x))
            add_point(s, d.t_s, {v});
          source = f->source;
          if (const DriverFact* r = snap.find("throttle_reasons");
              r && std::string(c.key) == "clock.current_mhz")
            reasons.push_back({d.t_s, r->value});
          break;
        }
    if (s.points.empty()) continue;
    s.meta = {{"source", source},
              {"period_s", kDriverPeriodS},
              {"time_axis", "wall time since the load began"},
              {"x_scale", "linear"}};
    if (!reasons.empty()) s.meta["throttle_reasons"] = reasons;
    result.push_back(std::move(s));
  }
  ctx.progress(
      fmt::format("sustain: {} launches over {:.1f} s, {:.0f} GFLOP/s at the start, {:.0f} at the end",
                  launches, t, gflops.front().second, gflops.back().second));
  return result;
}

}  // namespace gpuscope
