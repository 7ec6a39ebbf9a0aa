// Probe `launch`: what a kernel launch costs before any work is done.
//
// Shape of the experiment, and why:
// - The kernel is empty but for one store the host checks (launch.cl), so
//   every microsecond measured is launch machinery.
// - Isolated launches (enqueue one, wait for it, spinning) give two views:
//   dispatch latency from the launch's own timestamps (queued -> start: the
//   driver and the device's front end) and round trip from the host's clock
//   (enqueue call -> host sees completion: what a program that waits on
//   every launch pays). The host spins rather than sleeps while it waits,
//   since a sleep's granularity would be the measurement. OpenCL's
//   profiling events stamp the queueing on the device's clock; Vulkan's
//   queueing is the host's vkQueueSubmit call put on the device's clock by
//   calibrated timestamps (EventTimes::queued_deviation_ns: how far that
//   pairing may be off, kept in the series' meta).
// - One work-item and a full device's worth of work-groups: a launch whose
//   groups must be spread over every compute unit may cost more.
// - Batches of 4 to 256 launches enqueued back to back: the cost per launch
//   when the queue is kept full (host time / count), and the device's own
//   gap between consecutive launches (start of one -> start of the next).
#include "core/error.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {

std::vector<Series> run_launch_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  const bool quick = ctx.options.quick;
  TimeBudget budget = ctx.budget();
  auto sink = dev.create_buffer(sizeof(uint32_t));
  auto& k = dev.kernel({"launch", "empty", {}});
  uint32_t value = 1;
  auto check = [&] {
    if (dev.read_values<uint32_t>(*sink, 1)[0] != value)
      throw ValidationError("launch: the empty kernel's store is missing: a launch did not run");
    ++value;
  };

  const Axis items{"work-items", ""};
  Series dispatch = make_series("launch.dispatch", "launch", items, {"queued->start", "us"});
  Series submit = make_series("launch.submit_to_start", "launch", items, {"submit->start", "us"});
  Series roundtrip = make_series("launch.roundtrip", "launch", items, {"round trip", "us"});
  Series duration = make_series("launch.duration", "launch", items, {"start->end", "us"});
  const size_t group = std::min<size_t>(256, k.max_work_group_size());
  std::vector<double> deviation_us;  // of every calibrated queueing stamp
  std::string dispatch_problem;
  const size_t wide = group * std::max<size_t>(1, info.compute_units) * 8;
  const int isolated = quick ? 20 : 50;
  for (size_t n : {size_t{1}, wide}) {
    const Range global = Range::d1(n), local = Range::d1(n == 1 ? 1 : group);
    std::vector<double> d, s, r, e;
    for (int i = -3; i < isolated; ++i) {  // three warm-up launches
      const KernelArg args[] = {sink.get(), value};
      const LaunchBatch b = dev.launch_batch(k, {global, local}, args, 1);
      check();
      if (i < 0) continue;
      const EventTimes& t = b.events.front();
      // Queueing and submission are stamped by some APIs only.
      if (t.queued_ns) d.push_back((t.start_ns - *t.queued_ns) / 1e3);
      if (t.queued_deviation_ns) deviation_us.push_back(*t.queued_deviation_ns / 1e3);
      if (t.submit_ns) s.push_back((t.start_ns - *t.submit_ns) / 1e3);
      r.push_back(b.host_ns / 1e3);
      e.push_back((t.end_ns - t.start_ns) / 1e3);
    }
    // A host instant paired with the device's clock can land after the
    // start it precedes where the pairing is off: then there is no
    // dispatch latency to claim, and the meta says why.
    const auto lowest = std::min_element(d.begin(), d.end());
    if (lowest != d.end() && *lowest < 0) {
      dispatch_problem = fmt::format(
          "queued->start came out negative ({:.2f} us) for {} work-items: the host-device clock pairing is off by "
          "more than it claims here",
          *lowest, n);
      d.clear();
    }
    if (!d.empty() && dispatch_problem.empty()) add_point(dispatch, static_cast<double>(n), d);
    if (!s.empty()) add_point(submit, static_cast<double>(n), s);
    add_point(roundtrip, static_cast<double>(n), r);
    add_point(duration, static_cast<double>(n), e);
  }

  Series per_launch = make_series("launch.back_to_back", "launch", {"launches per batch", ""},
                                  {"host time per launch", "us"});
  Series gap = make_series("launch.back_to_back_gap", "launch", {"launches per batch", ""},
                           {"start->next start", "us"});
  for (int count : {4, 16, 64, 256}) {
    if (count > 16 && budget.exhausted()) break;
    std::vector<double> host, gaps;
    for (int rep = -1; rep < (quick ? 3 : 5); ++rep) {
      const KernelArg args[] = {sink.get(), value};
      const LaunchBatch b = dev.launch_batch(k, {Range::d1(1), Range::d1(1)}, args, count);
      check();
      if (rep < 0) continue;
      host.push_back(b.host_ns / 1e3 / count);
      gaps.push_back((b.events.back().start_ns - b.events.front().start_ns) / 1e3 / (count - 1));
    }
    add_point(per_launch, count, host);
    add_point(gap, count, gaps);
  }
  // Queueing is stamped by some APIs only (OpenCL; Vulkan through calibrated timestamps).
  if (!dispatch_problem.empty()) dispatch.points.clear();
  ctx.progress(fmt::format("launch: {}round trip {:.1f} us, back to back {:.1f} us",
                           dispatch.points.empty() ? ""
                                                   : fmt::format("dispatch {:.1f} us, ", dispatch.points.front().y),
                           roundtrip.points.front().y,
                           per_launch.points.empty() ? 0.0 : per_launch.points.back().y));
  std::vector<Series> out;
  for (Series* s : {&dispatch, &submit, &roundtrip, &duration, &per_launch, &gap}) {
    if (s->points.empty()) continue;  // dispatch and submit where the API stamps no queueing
    s->meta = {{"kernel", "launch/empty"}, {"group", group}, {"wall_s", budget.elapsed_s()}};
    if (s == &dispatch && !deviation_us.empty()) {
      s->meta["method"] =
          "calibrated timestamps: the host's submit call, on its monotonic clock, put on the device's timestamp "
          "clock by a pairing of both clocks taken just before each submission, to the launch's start timestamp";
      s->meta["calibration_deviation_us"] = median(deviation_us);
    }
    out.push_back(std::move(*s));
  }
  if (!dispatch_problem.empty()) {
    for (Series& s : out)
      if (s.id == "launch.roundtrip") s.meta["dispatch_not_measured"] = dispatch_problem;
  }
  return out;
}

}  // namespace gpuscope
