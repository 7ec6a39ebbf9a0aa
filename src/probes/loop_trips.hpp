// Probes size their launches by loop trip counts; some devices end a
// kernel's loops early (DeviceFeatures::max_loop_trips: llvmpipe stops every
// invocation after 65535 loop iterations in all, silently). Probes cap their
// trip counts below that, so that the work they time is the work they ask for.
#pragma once

#include "core/device_info.hpp"

#include <algorithm>
#include <cstdint>

namespace gpuscope {

// `wanted`, or less: at most the trips one invocation may run in all, less
// `other_trips` that the same invocation spends in its other loops. Never 0.
inline uint64_t loop_trip_cap(const DeviceFeatures& f, uint64_t wanted, uint64_t other_trips = 0) {
  if (f.max_loop_trips == 0) return wanted;
  const uint64_t room = f.max_loop_trips > other_trips ? f.max_loop_trips - other_trips : 1;
  return std::max<uint64_t>(1, std::min(wanted, room));
}

}  // namespace gpuscope
