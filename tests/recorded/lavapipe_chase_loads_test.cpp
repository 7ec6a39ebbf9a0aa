// lavapipe's latency chase on an AVX2-only AMD EPYC 2-vCPU VM (L1d 32 KiB,
// L2 512 KiB), 4-lane subgroups (LP_NATIVE_VECTOR_WIDTH=128), quick runs
// through Debian 12's Mesa 22.3 and bookworm-backports' Mesa 25.0
// (tests/data/lavapipe_epyc/). Mesa 22.3's llvmpipe loads every lane's
// address one at a time in a loop, active or not: a hop costs 12 ns in the
// L1 and the curve climbs smoothly from 16 KiB, so neither cache's end
// shows (device test LavapipeLatency skips on such a host). Mesa 25.0 loads
// an address every lane shares once: 3.2 ns a hop, flat to 32 KiB, and a
// step at the L1's end.
#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpuscope
