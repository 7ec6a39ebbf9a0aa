// BuildAhead (src/app/build_ahead.hpp) and the probes' build_ahead hooks: on
// a sim preset, through a device that records what it is asked to build
// ahead, the hooks name the kernels and launch shapes the probes then
// prebuild (and, for probes that build as they go, kernels they ask for),
// so that what is built ahead is what the probes use.
#include "app/build_ahead.hpp"
#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/probe.hpp"
#include "support/recording_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// icache also prebuilds the bodies its bisection may measure next, which
// depend on what it measured: every other kernel prebuilt is named ahead.
TEST(BuildAhead, HooksNameWhatTheProbesPrebuildOnAThreadOfTheirOwn) {
  sim::SimDevice sim(sim::load_sim_preset("adreno-530"), "sim:adreno-530");
  AheadRecordingDevice dev(sim);
  ProbeOptions options;
  options.quick = true;
  const auto probes = probes_named({"compute", "oplatency", "occupancy", "icache"});
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
  std::set<std::string> listed_bodies;
  for (const std::string& k : dev.ahead)
    if (k.starts_with("icache/")) listed_bodies.insert(k);
  for (const std::string& k : dev.ahead) EXPECT_TRUE(dev.prebuilt.count(k)) << k << " built ahead, never prebuilt";
  for (const std::string& k : dev.prebuilt)
    if (!dev.ahead.count(k)) EXPECT_TRUE(k.starts_with("icache/body{body=")) << k << " prebuilt, not named ahead";
  for (const char* family : {"compute/", "occupancy/", "icache/"})
    EXPECT_TRUE(std::any_of(dev.ahead.begin(), dev.ahead.end(), [&](const std::string& k) { return k.starts_with(family); }))
        << family;
}

// Probes that build as they go (bandwidth, lbm): every kernel their hooks
// name is one the probe asks for, but the footprint sweeps' write and copy
// at 4 words where the probe measured another width best (the hook cannot
// know it; the Adreno 530 preset's is not 4).
TEST(BuildAhead, HooksOfProbesThatBuildAsTheyGoNameKernelsTheyUse) {
  sim::SimDevice sim(sim::load_sim_preset("adreno-530"), "sim:adreno-530");
  AheadRecordingDevice dev(sim);
  ProbeOptions options;
  options.quick = true;
  const auto probes = probes_named({"bandwidth", "lbm"});
  {
    BuildAhead ahead(dev, probes, options, true);
    ahead.join();
  }
  for (const ProbeDef* p : probes) {
    ProbeContext ctx{dev, options, 0.5};
    p->run(ctx);
  }
  ASSERT_FALSE(dev.ahead.empty());
  const auto asked_for_another_width = [&](const std::string& key) {
    for (const char* sweep : {"bandwidth/write{unroll=4,vec=", "bandwidth/copy{unroll=4,vec="})
      if (key.starts_with(sweep))
        return std::any_of(dev.kernels().begin(), dev.kernels().end(),
                           [&](const auto& k) { return k.first.starts_with(sweep) && k.first != key; });
    return false;
  };
  for (const std::string& k : dev.ahead) {
    const std::string key = k.substr(0, k.rfind('@'));
    EXPECT_TRUE(dev.kernels().count(key) || asked_for_another_width(key)) << key << " built ahead, never asked for";
  }
  for (int mode = 0; mode < 3; ++mode)
    EXPECT_TRUE(dev.ahead.count("lbm/lbm_step{mode=" + std::to_string(mode) + "}@4096/128")) << mode;
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
