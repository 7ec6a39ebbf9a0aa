// The system probes' analysis on curves recorded on real devices
// (tests/data/README.md): the H200 of the GPU test machine and its Xeon host
// through PoCL. Findings are recomputed from the stored series.
#include "analysis/analyze.hpp"
#include "analysis/system.hpp"
#include "report/results_json.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

const Finding& get(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (f == nullptr) throw std::runtime_error("no finding " + id);
  return *f;
}

class H200System : public ::testing::TestWithParam<const char*> {};

// PCIe Gen5 x16 (nvidia-smi) moves at most ~63 GB/s; ALLOC_HOST_PTR buffers
// live in device memory (kernels read them at HBM speed) and every map
// copies them across the link: not zero copy.
TEST_P(H200System, TransfersAndZeroCopy) {
  const Results r = load_recorded(GetParam());
  for (const char* id : {"host.h2d_gbps", "host.d2h_gbps"}) {
    EXPECT_GT(number(get(r, id)), 45) << id;
    EXPECT_LT(number(get(r, id)), 64) << id;
  }
  EXPECT_FALSE(std::get<bool>(get(r, "host.zero_copy").value));
  EXPECT_TRUE(*analysis::map_copies(*r.find_series("transfer.map.host.to_host")));
  EXPECT_TRUE(*analysis::map_copies(*r.find_series("transfer.map.device.to_host")));
  EXPECT_TRUE(std::get<bool>(get(r, "host.svm_map_copies").value));
  const Series* reads = r.find_series("transfer.kernel_read");
  ASSERT_NE(reads, nullptr);
  EXPECT_GT(reads->points.at(1).y, 0.8 * reads->points.at(0).y);  // in device memory
  EXPECT_GT(reads->points.at(0).y, 1500);                         // HBM3e, not PCIe
}

TEST_P(H200System, LaunchAtomicsSchedulingClock) {
  const Results r = load_recorded(GetParam());
  const double dispatch = number(get(r, "launch.dispatch_us"));
  const double roundtrip = number(get(r, "launch.roundtrip_us"));
  EXPECT_GT(dispatch, 1);
  EXPECT_LT(dispatch, 30);
  EXPECT_GT(roundtrip, dispatch);
  EXPECT_LT(roundtrip, 60);

  const double global = number(get(r, "atomics.global.latency_ns"));
  const double local = number(get(r, "atomics.local.latency_ns"));
  EXPECT_GT(global, 50);
  EXPECT_LT(global, 400);
  EXPECT_GT(local, 10);
  EXPECT_LT(local, global);  // an SM's shared memory is nearer than L2
  EXPECT_GT(number(get(r, "atomics.global.add_throughput_gops")), 100);

  // Hopper: 32 blocks and 2048 threads per SM; 228 KiB of shared memory
  // per SM with 1 KiB reserved per block.
  EXPECT_EQ(number(get(r, "sched.max_workgroups_per_cu")), 32);
  EXPECT_FALSE(std::get<bool>(get(r, "sched.one_workgroup_per_cu").value));
  EXPECT_EQ(number(get(r, "sched.max_workitems_per_cu")), 2048);
  const Series* by_size = r.find_series("sched.by_wg_size");
  ASSERT_NE(by_size, nullptr);
  for (const auto& p : by_size->points) EXPECT_EQ(p.y, std::min(32.0, 2048 / p.x)) << "groups of " << p.x;
  const Series* by_local = r.find_series("sched.by_local_bytes");
  ASSERT_NE(by_local, nullptr);
  for (const auto& p : by_local->points)
    if (p.x >= 16384) EXPECT_EQ(p.y, std::floor(228.0 * 1024 / (p.x + 1024))) << p.x << " B of local memory";

  const Finding& clock = get(r, "device.measured_clock_mhz");
  EXPECT_NEAR(number(clock), 1980, 0.02 * 1980);
  EXPECT_GE(clock.confidence, 0.9);
}

INSTANTIATE_TEST_SUITE_P(Recorded, H200System,
                         ::testing::Values("h200/system_first.json", "h200/system_second.json",
                                           "h200/system_quick.json"));

// PoCL on the GPU machine's Xeon: buffers are host memory, so maps are free
// and kernels read host-allocated buffers at the same rate: zero copy.
TEST(XeonSystem, ZeroCopyAndOneGroupPerCore) {
  for (const char* file : {"pocl_xeon/basic_system.json", "pocl_xeon/pthread_system.json"}) {
    SCOPED_TRACE(file);
    const Results r = load_recorded(file);
    EXPECT_TRUE(std::get<bool>(get(r, "host.zero_copy").value));
    EXPECT_FALSE(std::get<bool>(get(r, "host.svm_map_copies").value));
    EXPECT_TRUE(std::get<bool>(get(r, "sched.one_workgroup_per_cu").value));
    EXPECT_EQ(number(get(r, "sched.max_workgroups_per_cu")), 1);
    // Without a cycle counter the clock is a guess near the reported 2100 MHz.
    const Finding& clock = get(r, "device.measured_clock_mhz");
    EXPECT_LT(clock.confidence, 0.7);
    EXPECT_NEAR(number(clock), 2100, 0.5 * 2100);
  }
}

// The single-threaded driver runs one work-group, and one work-item, at a
// time: the ping-pong's partner never runs while a player spins. The capped
// spin gives up, and no latency is claimed.
TEST(XeonSystem, SingleThreadedDriverClaimsNoPingPongLatency) {
  const Results r = load_recorded("pocl_xeon/basic_system.json");
  EXPECT_EQ(r.find_finding("atomics.global.latency_ns"), nullptr);
  EXPECT_EQ(r.find_finding("atomics.local.latency_ns"), nullptr);
  const Series* g = r.find_series("atomics.ping_pong.global");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->points.empty());
  EXPECT_NE(g->meta["not_measurable"]["32"].get<std::string>().find("no forward progress"),
            std::string::npos);
  // The threaded driver runs the two work-groups on two threads.
  const Results t = load_recorded("pocl_xeon/pthread_system.json");
  const double latency = number(get(t, "atomics.global.latency_ns"));
  EXPECT_GT(latency, 10);
  EXPECT_LT(latency, 1000);
}

}  // namespace
}  // namespace gpuscope
