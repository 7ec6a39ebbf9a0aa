// The arithmetic of putting a host instant on the device's timestamp clock,
// from one pairing of the two clocks (VK_EXT_calibrated_timestamps). Plain
// data and inline functions, no Vulkan headers, so that unit tests need no
// device.
#pragma once

#include <cstdint>

namespace gpuscope::vulkan {

// Both clocks read at nearly the same instant: the device's timestamp
// counter in ticks and a host clock in ns, read within max_deviation_ns of
// each other (the driver's maxDeviation).
struct ClockPairing {
  uint64_t device_ticks = 0;
  uint64_t host_ns = 0;
  uint64_t max_deviation_ns = 0;
};

// to - from on a counter with the valid bits `mask` (timestampValidBits),
// signed: the shorter way round, so an instant slightly before `from`
// comes out negative instead of wrapping.
inline int64_t signed_ticks(uint64_t from, uint64_t to, uint64_t mask) {
  const uint64_t d = (to - from) & mask;
  if (mask == ~uint64_t{0}) return static_cast<int64_t>(d);
  return d > mask / 2 ? -static_cast<int64_t>((mask - d) + 1) : static_cast<int64_t>(d);
}

// Host instant `host_ns` (on the pairing's host clock) on the device's
// clock, in ns after device tick `origin_ticks` (negative: before it). The
// clocks are taken to run at their nominal rates between the pairing and
// the instant (drift of a few ppm over the ms between them: ns); the
// result is uncertain by the pairing's max_deviation_ns.
inline double host_on_device_ns(const ClockPairing& p, uint64_t host_ns, uint64_t origin_ticks, double period_ns,
                                uint64_t mask) {
  const double pairing_after_origin = static_cast<double>(signed_ticks(origin_ticks, p.device_ticks, mask)) * period_ns;
  const double host_after_pairing = static_cast<double>(static_cast<int64_t>(host_ns - p.host_ns));
  return pairing_after_origin + host_after_pairing;
}

// The better of two pairings: the one read closer together.
inline const ClockPairing& tighter(const ClockPairing& a, const ClockPairing& b) {
  return b.max_deviation_ns < a.max_deviation_ns ? b : a;
}

}  // namespace gpuscope::vulkan
