// The closed loop on a recorded H100 run (tests/data/h100/closed_loop_opencl.json,
// the whole default run through OpenCL with its replay): the model the run
// wrote is a valid description; the latency chase replayed on it today
// reproduces the measured staircase; and the model, run through the sim's
// latency probe, reads the levels the real run read.
#include "analysis/cache_hierarchy.hpp"
#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "model/model_builder.hpp"
#include "model/replay.hpp"
#include "probes/probe.hpp"

#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

constexpr const char* kRun = "h100/closed_loop_opencl.json";

// The run with only its latency chase: what the replay below runs (the
// whole replay of an H100's model costs about a minute of host time a probe).
Results latency_only(const Results& r) {
  Results out = r;
  out.series.clear();
  for (const auto& s : r.series)
    if (s.id == "latency.global") out.series.push_back(s);
  return out;
}

TEST(ClosedLoopH100, TheRecordedRunsModelIsAValidDescription) {
  const Results r = read_recorded(kRun);
  ASSERT_TRUE(r.model.contains("replay")) << "the recorded run replayed";
  const model::GpuModel m = model::build_model(r);
  const sim::SimConfig c = sim::parse_sim_config(m.description, "model.json");
  EXPECT_GE(c.caches.size(), 3u);  // L1, the L2's near half, the far half (and texture levels)
  EXPECT_EQ(c.core.shader_cores, 132u);
}

TEST(ClosedLoopH100, TheChaseReplayedOnTheModelReproducesTheMeasuredStaircase) {
  const Results r = read_recorded(kRun);
  const model::GpuModel m = model::build_model(r);
  const model::Replay replay = model::replay_on_model(latency_only(r), m.description);
  ASSERT_EQ(replay.series.size(), 1u);
  const model::SeriesReplay& s = replay.series[0];
  std::printf("latency.global: %zu points, median error %.2f%%, worst %.1f%% at %g B\n", s.points,
              100 * s.median_error, 100 * s.worst_error, s.worst_x);
  EXPECT_EQ(s.interpolated, 0u);
  EXPECT_LE(s.median_error, model::kReproducedMedianError);
  EXPECT_TRUE(s.reproduced);
}

// The model as a device: its own latency run, analysed, gives the real
// run's levels (latencies within 5%, capacities within 10%: the recovery
// benchmark's tolerances).
TEST(ClosedLoopH100, TheModelRunAsADeviceReadsTheRunsLevels) {
  const Results real = read_recorded(kRun);
  const model::GpuModel m = model::build_model(real);
  sim::SimDevice dev(sim::parse_sim_config(m.description, "model.json"), "sim:model.json");
  ProbeOptions options;
  ProbeContext ctx{dev, options, 12.0};
  Results modelled;
  modelled.device = dev.info();
  modelled.series = run_latency_probe(ctx);
  const auto found = analysis::analyze_all(modelled);
  for (int level = 1; level <= 2; ++level) {
    const std::string lat = "memory.L" + std::to_string(level) + ".latency_ns";
    const std::string cap = "memory.L" + std::to_string(level) + ".capacity_bytes";
    ASSERT_NE(real.find_finding(lat), nullptr) << lat;
    const double want_lat = number(*real.find_finding(lat)), want_cap = number(*real.find_finding(cap));
    const double got_lat = test::finding_value(found, lat), got_cap = test::finding_value(found, cap);
    std::printf("%s: real %.4g ns, model %.4g ns; %s: real %.4g B, model %.4g B\n", lat.c_str(), want_lat,
                got_lat, cap.c_str(), want_cap, got_cap);
    EXPECT_NEAR(got_lat / want_lat, 1.0, 0.05) << lat;
    EXPECT_NEAR(got_cap / want_cap, 1.0, 0.10) << cap;
  }
}

}  // namespace
}  // namespace gpuscope
