// The arithmetic that puts a host instant on the device's timestamp clock
// (src/backends/vulkan/clock_pairing.hpp): wrap-around of counters with
// fewer than 64 valid bits, the sign of instants before the origin, the
// timestamp period's scaling.
#include "backends/vulkan/clock_pairing.hpp"

#include <gtest/gtest.h>

namespace gpuscope::vulkan {
namespace {

constexpr uint64_t kMask36 = (uint64_t{1} << 36) - 1;
constexpr uint64_t kMask64 = ~uint64_t{0};

TEST(ClockPairing, SignedTicksTakeTheShortWayRound) {
  EXPECT_EQ(signed_ticks(100, 250, kMask36), 150);
  EXPECT_EQ(signed_ticks(250, 100, kMask36), -150);
  // The counter wrapped between the two readings: 10 ticks, not 2^36 - 10.
  EXPECT_EQ(signed_ticks(kMask36 - 4, 5, kMask36), 10);
  EXPECT_EQ(signed_ticks(5, kMask36 - 4, kMask36), -10);
  EXPECT_EQ(signed_ticks(kMask64 - 1, 3, kMask64), 5);
  EXPECT_EQ(signed_ticks(7, 7, kMask36), 0);
}

TEST(ClockPairing, HostInstantLandsWhereThePairingPutsIt) {
  // Paired at device tick 1000 (period 1 ns) and host 5000 ns. A submit at
  // host 5200 is device tick 1200; the launch started at tick 1500, so the
  // submit is 300 ns before that start.
  const ClockPairing p{1000, 5000, 20};
  EXPECT_DOUBLE_EQ(host_on_device_ns(p, 5200, 1500, 1.0, kMask64), -300.0);
  // The same with a 32 ns tick (the pairing's device ticks scale; host ns do not).
  const ClockPairing q{1000, 5000, 20};
  EXPECT_DOUBLE_EQ(host_on_device_ns(q, 5200, 1010, 32.0, kMask64), -320.0 + 200.0);
  // A host instant before the pairing, and the device counter wrapping
  // between the pairing and the origin.
  const ClockPairing w{kMask36 - 9, 1000000, 5};
  EXPECT_DOUBLE_EQ(host_on_device_ns(w, 999000, 10, 1.0, kMask36), -20.0 - 1000.0);
}

TEST(ClockPairing, TighterKeepsTheSmallerDeviation) {
  const ClockPairing a{1, 2, 30}, b{3, 4, 10};
  EXPECT_EQ(tighter(a, b).device_ticks, 3u);
  EXPECT_EQ(tighter(b, a).device_ticks, 3u);
  EXPECT_EQ(tighter(a, a).device_ticks, 1u);
}

}  // namespace
}  // namespace gpuscope::vulkan
