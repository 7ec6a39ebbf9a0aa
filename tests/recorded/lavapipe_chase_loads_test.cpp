// lavapipe's latency chase, 4-lane subgroups (LP_NATIVE_VECTOR_WIDTH=128),
// through Debian 12's Mesa 22.3 and bookworm-backports' Mesa 25.0, on two
// 2-vCPU VMs:
// - an AVX2-only AMD EPYC (L1d 32 KiB, L2 512 KiB; tests/data/lavapipe_epyc/,
//   quick runs). Mesa 22.3's llvmpipe loads every lane's address one at a
//   time in a loop, active or not: a hop costs 12 ns in the L1 and the curve
//   climbs smoothly from 16 KiB, so neither cache's end shows. Mesa 25.0
//   loads an address every
//   lane shares once: 3.2 ns a hop, flat to 32 KiB, and a step at the L1's
//   end.
// - an Intel Xeon, Emerald Rapids with AVX-512 (L1d 48 KiB, L2 2 MiB;
//   tests/data/lavapipe_xeon/, whole sweeps). Mesa 25.0 costs 8.3 ns a hop by
//   address, yet the L1's end still raises it 1.43x and both caches are read
//   as Linux gives them: a hop's cost is not what hides a step.
// - an AMD EPYC, Zen 5 with AVX-512 (L1d 48 KiB, L2 1 MiB;
//   tests/data/lavapipe_zen5/, whole sweeps). Mesa 25.0's address chase
//   costs 6.2-6.7 ns a hop in the L1 and 7.1 past it: the L1's end raises it
//   1.14x, below the least visible step (1.2x): the address chase shows no
//   L1 there even under Mesa 25.0; the index chase, 4.5 ns a hop, steps
//   1.53x and reads the L1.
#include "support/chase_step.hpp"
#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace gpuscope {
namespace {

double hop_ns(const Results& r, double footprint) {
  const Series* s = r.find_series("latency.global");
  if (!s) return -1;
  for (const Point& p : s->points)
    if (p.x == footprint) return p.y;
  return -1;
}

TEST(LavapipeChaseLoads, Mesa22BuriesTheL1StepThatMesa25Shows) {
  const Results mesa22 = load_recorded("lavapipe_epyc/latency_quick_mesa22.json");
  const Results mesa25 = load_recorded("lavapipe_epyc/latency_quick_mesa25.json");
  EXPECT_NE(mesa22.device.driver_version.find("22.3"), std::string::npos) << mesa22.device.driver_version;
  EXPECT_NE(mesa25.device.driver_version.find("25.0"), std::string::npos) << mesa25.device.driver_version;

  // 22.3: a hop costs more than an L2 hit at every footprint, and the L1's
  // end moves it by under a tenth.
  EXPECT_GT(hop_ns(mesa22, 1024), 8);
  EXPECT_LT(hop_ns(mesa22, 65536) / hop_ns(mesa22, 32768), 1.1);
  // 25.0: an L1 hit's few ns, and 1.5x past the L1.
  EXPECT_LT(hop_ns(mesa25, 1024), 4);
  EXPECT_LT(hop_ns(mesa25, 32768) / hop_ns(mesa25, 1024), 1.1);
  EXPECT_GT(hop_ns(mesa25, 65536) / hop_ns(mesa25, 32768), 1.5);
  const double l1 = test::finding_value(mesa25, "memory.L1.capacity_bytes");
  EXPECT_GE(l1, 32768);
  EXPECT_LE(l1, 65536);
}

const Series& chase(const Results& r) {
  const Series* s = r.find_series("latency.global");
  if (!s) throw std::runtime_error("no latency.global series");
  return *s;
}

// The least visible step (tests/support/chase_step.hpp) on every recorded
// curve: only Mesa 22.3 on the EPYC falls below it.
TEST(LavapipeChaseLoads, StepAcrossTheL1SaysWhichCurvesCanShowIt) {
  const Results epyc22 = load_recorded("lavapipe_epyc/latency_quick_mesa22.json");
  EXPECT_LT(test::step_across(chase(epyc22), 32768), test::kLeastVisibleStep);
  EXPECT_GT(test::step_across(chase(load_recorded("lavapipe_epyc/latency_quick_mesa25.json")), 32768), 1.5);
  for (const char* file : {"latency_mesa22_address.json", "latency_mesa22_index.json",
                           "latency_mesa25_address.json", "latency_mesa25_index.json"}) {
    SCOPED_TRACE(file);
    EXPECT_GT(test::step_across(chase(load_recorded(std::string("lavapipe_xeon/") + file)), 49152), 1.35);
  }
}

// Mesa 25.0 on the Zen 5 EPYC: the address chase's L1 step below the
// least visible step, the index chase's well above it, and
// the index chase's L1 within 10% of Linux's 48 KiB.
TEST(LavapipeChaseLoads, Zen5Mesa25AddressChaseHidesTheL1StepTheIndexChaseShows) {
  const Results address = load_recorded("lavapipe_zen5/latency_mesa25_address.json");
  const Results index = load_recorded("lavapipe_zen5/latency_mesa25_index.json");
  EXPECT_NE(address.device.driver_version.find("25.0"), std::string::npos) << address.device.driver_version;
  EXPECT_LT(test::step_across(chase(address), 49152), test::kLeastVisibleStep);
  EXPECT_GT(test::step_across(chase(index), 49152), 1.35);
  EXPECT_NEAR(test::finding_value(index, "memory.L1.capacity_bytes"), 49152, 0.1 * 49152);
}

// Mesa 25.0's address chase on the Xeon: more than 8 ns a hop at 1 KiB
// (dearer than an L2 hit on either host), and both caches within 10% of
// Linux's 48 KiB and 2 MiB (49.9 KiB and 1.89 MiB); the index chase, 5.3 ns a
// hop, 49.9 KiB and 1.69 MiB (its L2 held within 20%).
TEST(LavapipeChaseLoads, XeonMesa25ReadsBothCachesThroughAnEightNanosecondHop) {
  const Results address = load_recorded("lavapipe_xeon/latency_mesa25_address.json");
  EXPECT_NE(address.device.driver_version.find("25.0"), std::string::npos) << address.device.driver_version;
  EXPECT_GT(hop_ns(address, 1024), 8);
  EXPECT_NEAR(test::finding_value(address, "memory.L1.capacity_bytes"), 49152, 0.1 * 49152);
  EXPECT_NEAR(test::finding_value(address, "memory.L2.capacity_bytes"), 2097152, 0.1 * 2097152);
  const Results index = load_recorded("lavapipe_xeon/latency_mesa25_index.json");
  EXPECT_NEAR(test::finding_value(index, "memory.L1.capacity_bytes"), 49152, 0.1 * 49152);
  EXPECT_NEAR(test::finding_value(index, "memory.L2.capacity_bytes"), 2097152, 0.2 * 2097152);
}

}  // namespace
}  // namespace gpuscope
