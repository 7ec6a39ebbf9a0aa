// How long a backend waits for a submission before it calls the device at
// fault (LaunchTimeout, core/error.hpp). Every probe plans its launches to
// last at most planned_ms (--max-launch-ms), so a launch far past that is a
// hung or badly mis-sized launch, never a slow one worth waiting for: the
// wait is a multiple of the plan, with a floor for what a first launch may
// carry besides its kernel and a ceiling no plan raises it past.
#pragma once

#include <algorithm>

namespace gpuscope {

struct LaunchBound {
  // The longest launch a probe plans, in ms (HarnessConfig::max_launch_ms).
  double planned_ms = 200;

  // A launch may run this many times its plan before it is a fault: the
  // plan is made from a calibration launch, and a CPU device sharing its
  // cores with other work (a 2-core CI VM) or a GPU throttling from its
  // boost clock runs several times slower than it was calibrated at.
  static constexpr double kOverrun = 10;
  // Never less than this, in ms: a first launch may carry the driver's
  // compile of the kernel for its work-group shape (PoCL compiles at the
  // first enqueue of each shape: seconds on a loaded 2-core VM).
  static constexpr double kFloorMs = 5000;
  // Never more than this, in ms, whatever the plan: --max-launch-ms' largest
  // value (10 s) times kOverrun would be 100 s; a minute of one launch is a
  // hang on every device gpuscope runs on, and a run must end.
  static constexpr double kCeilingMs = 60000;

  // The wait for `launches` launches submitted together (a batch), in ms.
  double wait_ms(int launches = 1) const {
    return std::clamp(kOverrun * planned_ms * std::max(launches, 1), kFloorMs, kCeilingMs);
  }
  // The wait for a command whose length no plan sets (a copy, a map, a
  // render pass): the ceiling only.
  static constexpr double command_wait_ms() { return kCeilingMs; }
};

}  // namespace gpuscope
