// The transfer/launch/SVM backend methods and the five system probes
// (transfer, launch, atomics, scheduling, clock) on the CPU through PoCL.
// No timed assertions: shapes, validation, the safe answer of a capped
// spin, and findings that must hold on any CPU device.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace gpuscope {
namespace {

TEST(OpenClSystemMethods, TimedCopiesMoveTheData) {
  auto dev = open_device(cpu_device_id());
  ASSERT_NE(dev->host_transfers(), nullptr);
  HostTransferFacet& xfer = *dev->host_transfers();
  constexpr size_t kBytes = 1 << 20;
  auto buf = dev->create_buffer(kBytes);
  auto pinned = xfer.create_pinned_host(kBytes);
  ASSERT_EQ(pinned->bytes().size(), kBytes);
  for (size_t i = 0; i < kBytes; ++i) pinned->bytes()[i] = static_cast<std::byte>(i * 7);
  for (bool blocking : {true, false}) {
    const TransferTiming w = xfer.timed_write(*buf, pinned->bytes(), blocking);
    EXPECT_GT(w.host_ns, 0);
    EXPECT_GT(w.device_ns, 0);
    std::vector<std::byte> back(kBytes);
    const TransferTiming r = xfer.timed_read(*buf, back, blocking);
    EXPECT_GT(r.host_ns, 0);
    EXPECT_EQ(std::memcmp(back.data(), pinned->bytes().data(), kBytes), 0);
  }
}

TEST(OpenClSystemMethods, MapsShowAndKeepTheBytes) {
  auto dev = open_device(cpu_device_id());
  ASSERT_NE(dev->host_transfers(), nullptr);
  HostTransferFacet& xfer = *dev->host_transfers();
  for (bool host_kind : {false, true}) {
    auto buf = host_kind ? xfer.create_host_buffer(4096) : dev->create_buffer(4096);
    xfer.timed_map(*buf, MapDirection::to_device, [](std::span<std::byte> m) {
      ASSERT_EQ(m.size(), 4096u);
      std::memset(m.data(), 0x5a, m.size());
    });
    bool all = false;
    const MapTiming t = xfer.timed_map(*buf, MapDirection::to_host, [&](std::span<std::byte> m) {
      all = std::all_of(m.begin(), m.end(), [](std::byte b) { return b == std::byte{0x5a}; });
    });
    EXPECT_TRUE(all);
    EXPECT_GT(t.map_host_ns + t.unmap_host_ns, 0);
    EXPECT_EQ(dev->read_values<uint8_t>(*buf, 1)[0], 0x5a);
  }
}

TEST(OpenClSystemMethods, LaunchBatchTimesEveryLaunchInOrder) {
  auto dev = open_device(cpu_device_id());
  auto sink = dev->create_buffer(4);
  auto& k = dev->kernel({"launch", "empty", {}});
  const KernelArg args[] = {sink.get(), uint32_t{77}};
  const LaunchBatch b = dev->launch_batch(k, {Range::d1(1), Range::d1(1)}, args, 8);
  ASSERT_EQ(b.events.size(), 8u);
  EXPECT_GT(b.host_ns, 0);
  EXPECT_EQ(b.events.front().queued_ns, 0.0);  // OpenCL stamps queueing and submission
  for (size_t i = 0; i < b.events.size(); ++i) {
    const EventTimes& e = b.events[i];
    ASSERT_TRUE(e.queued_ns && e.submit_ns);
    EXPECT_LE(*e.queued_ns, *e.submit_ns);
    EXPECT_LE(*e.submit_ns, e.start_ns);
    EXPECT_LE(e.start_ns, e.end_ns);
    if (i > 0) EXPECT_GE(e.start_ns, b.events[i - 1].start_ns);  // in-order queue
  }
  EXPECT_EQ(dev->read_values<uint32_t>(*sink, 1)[0], 77u);
}

TEST(OpenClSystemMethods, SvmCapabilitiesAndMap) {
  auto dev = open_device(cpu_device_id());
  // The facet is offered exactly where the features say coarse-grained SVM works.
  SvmFacet* svm = dev->svm();
  ASSERT_EQ(svm != nullptr, dev->info().features.shared_virtual_memory);
  if (!svm) GTEST_SKIP() << "no coarse-grained SVM on this PoCL";
  EXPECT_TRUE(svm->capabilities().coarse_grain_buffer);
  size_t seen = 0;
  svm->timed_map(65536, MapDirection::to_device, [&](std::span<std::byte> m) { seen = m.size(); });
  EXPECT_EQ(seen, 65536u);
}

// All five probes through the command line, on PoCL's single-threaded
// driver, which runs one work-group (and one work-item) at a time: a device
// with no forward progress between work-groups, where every ping-pong spin
// must give up at its cap and the run go on.
TEST(SystemProbesOnPocl, RunAndFindWhatACpuIs) {
  const auto dir = test::fresh_temp_dir("pocl_system");
  const auto r =
      test::run_gpuscope("run --quiet --no-replay --quick --probes transfer,launch,atomics,scheduling,clock --device " +
                             cpu_device_id() + " --out " + dir.string(),
                         "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << res.skipped.front().reason;

  for (const char* id :
       {"transfer.h2d.pinned", "transfer.d2h.pageable.blocking", "transfer.map.host.to_host",
        "transfer.mapped.host.to_device", "transfer.kernel_read", "launch.dispatch", "launch.roundtrip",
        "launch.back_to_back", "atomics.add.uncontended", "atomics.add.contended", "sched.by_wg_size",
        "sched.by_local_bytes", "clock.chain"}) {
    const Series* s = res.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_FALSE(s->points.empty()) << id;
    for (const auto& p : s->points) {
      EXPECT_FALSE(p.samples.empty()) << id;
      EXPECT_GT(p.y, 0) << id << " at " << p.x;
    }
  }
  EXPECT_GE(res.find_series("transfer.h2d.pinned")->points.size(), 4u);  // 4 KiB .. 16 MiB

  // Host memory is device memory.
  const Finding* zc = res.find_finding("host.zero_copy");
  ASSERT_NE(zc, nullptr);
  EXPECT_TRUE(std::get<bool>(zc->value)) << zc->note;
  for (const char* id : {"host.h2d_gbps", "host.d2h_gbps", "host.map_gbps", "launch.dispatch_us",
                         "launch.roundtrip_us", "atomics.global.add_throughput_gops"}) {
    const Finding* f = res.find_finding(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_GT(number(*f), 0) << id;
  }
  EXPECT_GT(number(*res.find_finding("launch.roundtrip_us")),
            number(*res.find_finding("launch.dispatch_us")) * 0.5);

  // One work-group at a time: no ping-pong latency, and the series say why.
  for (const char* id : {"atomics.ping_pong.global", "atomics.ping_pong.local"}) {
    const Series* s = res.find_series(id);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->points.empty()) << id;
    EXPECT_TRUE(s->meta["not_measurable"].contains("32")) << id;
  }
  EXPECT_EQ(res.find_finding("atomics.global.latency_ns"), nullptr);

  const Finding* one = res.find_finding("sched.one_workgroup_per_cu");
  ASSERT_NE(one, nullptr);
  EXPECT_TRUE(std::get<bool>(one->value)) << one->note;
  EXPECT_EQ(number(*res.find_finding("sched.max_workgroups_per_cu")), 1);

  const Finding* clock = res.find_finding("device.measured_clock_mhz");
  ASSERT_NE(clock, nullptr);
  EXPECT_GT(number(*clock), 0.3 * res.device.clock_mhz);
  EXPECT_LT(number(*clock), 3.0 * res.device.clock_mhz);
  EXPECT_LE(clock->confidence, 0.6);  // no cycle counter on a CPU: an estimate
}

}  // namespace
}  // namespace gpuscope
