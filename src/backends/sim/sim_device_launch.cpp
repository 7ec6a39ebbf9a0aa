// SimDevice::launch_batch: launches with their profiling timestamps.
//
// The timeline of a batch of `count` identical launches, each event in ns of
// the host's steady clock (only differences mean anything):
// - queued: all launches are enqueued at once when the batch begins (the
//   description has no host cost per enqueue; the host's cost is in host_ns);
// - submit = queued: the sim's queue flushes on enqueue, so the whole
//   dispatch latency lies between submit and start;
// - start: the first launch starts launch.dispatch_us after it is queued; each
//   next one launch.back_to_back_us after the previous start (the front end's
//   gap when its queue is full), or when the previous ends, if that is later
//   (an in-order queue);
// - end = start + the kernel's modelled time (its family's run()).
// host_ns is launch_overhead_us (the round trip of an isolated empty launch:
// enqueue, dispatch, completion seen by the host) plus the device's span from
// the first start to the last end: for a batch of one, the round trip plus
// the kernel. Every interval gets the description's measurement noise.
// The modelled clock (budget_clock_s) advances by host_ns.
#include "backends/sim/sim_device.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <chrono>

namespace gpuscope::sim {

LaunchBatch SimDevice::launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                                    int count) {
  if (count < 1) throw DeviceError("sim: a batch of fewer than one launch");
  const double t0 =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
  LaunchBatch b;
  b.events.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    EventTimes e;
    e.queued_ns = t0;
    e.submit_ns = t0;
    if (i == 0) {
      e.start_ns = t0 + with_noise(cfg_.launch.dispatch_us * 1e3);
    } else {
      const EventTimes& prev = b.events.back();
      e.start_ns = std::max(prev.start_ns + with_noise(cfg_.launch.back_to_back_us * 1e3), prev.end_ns);
    }
    e.end_ns = e.start_ns + run_launch(k, shape, args);  // the kernel's work and its noisy time
    b.events.push_back(e);
  }
  check_bound(k, b.events.back().end_ns - b.events.front().start_ns, count);
  b.host_ns =
      with_noise(cfg_.launch_overhead_us * 1e3) + (b.events.back().end_ns - b.events.front().start_ns);
  modelled_ns_ += b.host_ns;
  return b;
}

}  // namespace gpuscope::sim
