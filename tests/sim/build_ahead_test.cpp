// BuildAhead (src/app/build_ahead.hpp) and the probes' build_ahead hooks: on
// a sim preset, through a device that records what it is asked to build
// ahead, the hooks name exactly the kernels and launch shapes the probes
// then prebuild, so that what is built ahead is what the probes use.
#include "app/build_ahead.hpp"
#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/probe.hpp"
#include "support/recording_device.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <thread>

using namespace gpuscope;

namespace {

std::string shape_text(const LaunchShape& s) {
  return std::to_string(s.global.total()) + "/" + std::to_string(s.local.total());
}

// Records each kernel asked for through build_ahead or prebuild with the
// shape it was asked for ("key@global/local"), and the threads that asked.
class AheadRecordingDevice : public test::RecordingDevice {
 public:
  using RecordingDevice::RecordingDevice;
  void build_ahead(std::span<const KernelSpec> specs, const LaunchShape& shape) override {
    const std::lock_guard lock(mutex_);
    for (const KernelSpec& s : specs) ahead.insert(s.key() + "@" + shape_text(shape));
    ahead_threads.insert(std::this_thread::get_id());
  }
  void prebuild(std::span<const KernelSpec> specs, const LaunchShape& shape) override {
    const std::lock_guard lock(mutex_);
    for (const KernelSpec& s : specs) prebuilt.insert(s.key() + "@" + shape_text(shape));
  }
  std::set<std::string> ahead, prebuilt;
  std::set<std::thread::id> ahead_threads;

 private:
  std::mutex mutex_;
};

std::vector<const ProbeDef*> probes_named(std::initializer_list<const char*> names) {
  std::vector<const ProbeDef*> out;
  for (const char* n : names) out.push_back(&find_probe(n));
  return out;
}

TEST(BuildAhead, HooksNameWhatTheProbesPrebuildOnAThreadOfTheirOwn) {
  sim::SimDevice sim(sim::load_sim_preset("adreno-530"), "sim:adreno-530");
  AheadRecordingDevice dev(sim);
  ProbeOptions options;
  options.quick = true;
  const auto probes = probes_named({"occupancy", "icache"});
  {
    BuildAhead ahead(dev, probes, options, true);
    ahead.join();
  }
  ASSERT_FALSE(dev.ahead.empty());
  EXPECT_EQ(dev.ahead_threads.count(std::this_thread::get_id()), 0u);

  for (const ProbeDef* p : probes) {
    ProbeContext ctx{dev, options, 0.5};
    p->run(ctx);
  }
  EXPECT_EQ(dev.ahead, dev.prebuilt);
}

TEST(BuildAhead, DisabledBuildsNothing) {
  sim::SimDevice sim(sim::load_sim_preset("adreno-530"), "sim:adreno-530");
  AheadRecordingDevice dev(sim);
  {
    BuildAhead ahead(dev, probes_named({"matrix", "occupancy", "icache"}), ProbeOptions{}, false);
  }
  EXPECT_TRUE(dev.ahead.empty());
}

}  // namespace
