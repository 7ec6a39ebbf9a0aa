// The fit on the sim (model/fit.hpp): a chase measured on a known GPU and a
// model whose reader misread one capacity; the fit finds the capacity, the
// whole replay confirms it, and a model that draws the curve is left alone.
#include "model/fit.hpp"
#include "model/model_builder.hpp"
#include "model/replay.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::model {
namespace {

using test::make_finding;
constexpr double kKiB = 1024;
constexpr double kTrueL2 = 256 * kKiB;
// The chase's points, per octave: no model can place a capacity closer than
// between the last point that hits and the first that misses.
constexpr double kPointsPerOctave = 5;
const double kResolution = std::pow(2.0, 1 / kPointsPerOctave);

// A small GPU, as model_builder writes it from findings.
Results small_gpu(double l2_capacity) {
  Results r;
  r.device.id = "sim:test";
  r.device.type = "gpu";
  r.device.compute_units = 2;
  r.device.clock_mhz = 1000;
  r.device.global_mem_bytes = uint64_t{1} << 30;
  r.device.max_alloc_bytes = uint64_t{256} << 20;
  r.device.max_work_group_size = 256;
  r.device.global_cache_line_bytes = 64;
  auto& f = r.findings;
  f.push_back(make_finding("memory.cache_levels", 2.0, "", 0.9));
  f.push_back(make_finding("memory.L1.capacity_bytes", 16 * kKiB, "B", 0.9));
  f.push_back(make_finding("memory.L1.latency_ns", 40.0, "ns", 0.9));
  f.push_back(make_finding("memory.L2.capacity_bytes", l2_capacity, "B", 0.8));
  f.push_back(make_finding("memory.L2.latency_ns", 150.0, "ns", 0.8));
  f.push_back(make_finding("memory.dram.latency_ns", 400.0, "ns", 0.9));
  return r;
}

// The chase measured on the true GPU (noiseless), kPointsPerOctave points
// an octave from 4 KiB to 2 MiB.
Results measured_chase() {
  Results r = small_gpu(kTrueL2);
  const nlohmann::json truth = build_model(r).description;
  std::map<std::string, std::vector<double>> points;
  for (double x = 4 * kKiB; x <= 2048 * kKiB; x *= kResolution) points["latency.global"].push_back(std::round(x / 64) * 64);
  ProbeOptions options = replay_options(r);
  options.replay_points = &points;
  const ProbeDef* latency = replayable_probe("latency");
  EXPECT_NE(latency, nullptr);
  r.series = run_probe_on_model(*latency, noiseless_config(truth), options);
  return r;
}

const FitChange* change_of(const Fit& f, const std::string& field) {
  for (const auto& p : f.probes)
    for (const auto& c : p.changes)
      if (c.field == field) return &c;
  return nullptr;
}

TEST(Fit, AMisreadCapacityIsFoundFromTheChaseAndTheWholeReplayConfirmsIt) {
  Results measured = measured_chase();
  ASSERT_FALSE(measured.series.empty());
  // The reader put the L2 at 1.3x its capacity.
  measured.findings = small_gpu(1.3 * kTrueL2).findings;
  const nlohmann::json readers = build_model(measured).description;
  const Replay before = replay_on_model(measured, readers);
  const Fit fit = fit_model(measured, readers, before);
  ASSERT_TRUE(fit.changed()) << fit_json(fit, "").dump(1);
  const FitChange* cap = change_of(fit, "memory.caches[1].capacity_bytes");
  ASSERT_NE(cap, nullptr) << fit_json(fit, "").dump(1);
  EXPECT_GE(cap->fitted.get<double>(), kTrueL2) << fit_json(fit, "").dump(1);
  EXPECT_LT(cap->fitted.get<double>(), kTrueL2 * kResolution) << fit_json(fit, "").dump(1);
  EXPECT_EQ(cap->findings, std::vector<std::string>{"memory.L2.capacity_bytes"});
  EXPECT_EQ(change_of(fit, "memory.caches[0].capacity_bytes"), nullptr) << "the L1 was read right";
  EXPECT_LT(fit.probes[0].criterion_after, fit.probes[0].criterion_before);
  EXPECT_TRUE(fit.probes[0].stopped.empty()) << fit.probes[0].stopped;

  const Replay after = replay_on_model(measured, fit.description);
  EXPECT_EQ(fit_unconfirmed(fit, before, after, measured.series), "");
  apply_fit_to_findings(measured.findings, fit);
  const Finding* l2 = find_finding(measured.findings, "memory.L2.capacity_bytes");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(std::get<double>(l2->value), cap->fitted.get<double>());
}

TEST(Fit, AModelThatDrawsTheChaseIsLeftAsTheReadersHaveIt) {
  Results measured = measured_chase();
  const nlohmann::json readers = build_model(measured).description;
  const Fit fit = fit_model(measured, readers, replay_on_model(measured, readers));
  EXPECT_FALSE(fit.changed()) << fit_json(fit, "").dump(1);
  EXPECT_TRUE(fit.probes.empty()) << "nothing searched: " << fit_json(fit, "").dump(1);
}

}  // namespace
}  // namespace gpuscope::model
