// The fit's pure parts (model/fit.hpp): rule fit-criterion, the fitted
// values written into a description the sim's strict reader accepts, a
// recorded fit read back, and the findings a kept fit moves.
#include "backends/sim/sim_config.hpp"
#include "model/fit.hpp"
#include "model/model_builder.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::model {
namespace {

using test::make_finding;

Series series_of(std::vector<double> ys) {
  Series s;
  s.id = "latency.global";
  s.probe = "latency";
  for (size_t i = 0; i < ys.size(); ++i) s.points.push_back({static_cast<double>(1024 << i), ys[i], {ys[i]}});
  return s;
}

TEST(FitCriterion, AModelWithinTheNoiseScoresTheFloorAndAMissScoresWorse) {
  const Series s = series_of({10, 20, 40, 80});
  const double exact = fit_criterion(s, {10, 20, 40, 80}, 0);
  // n ln(floor^2): a noiseless model is not rewarded past what data tells apart.
  EXPECT_NEAR(exact, 4 * std::log(kCriterionFloor * kCriterionFloor), 1e-9);
  EXPECT_NEAR(fit_criterion(s, {10.01, 20, 40, 80}, 0), exact, 1e-9) << "within the floor";
  EXPECT_GT(fit_criterion(s, {10, 20, 40, 120}, 0), exact);
  // The series' own noise raises the floor.
  EXPECT_NEAR(fit_criterion(s, {10, 20, 40, 80}, 0.05), 4 * std::log(0.05 * 0.05), 1e-9);
}

TEST(FitCriterion, APointTheModelGivesNothingAtCountsAsMissedByAFactorOfE) {
  const Series s = series_of({10, 20});
  EXPECT_NEAR(fit_criterion(s, {10, std::nan("")}, 0), 2 * std::log(0.5), 1e-9);
  EXPECT_NEAR(fit_criterion(s, {10, -1}, 0), 2 * std::log(0.5), 1e-9);
}

// A model with a measured TLB, as model_builder writes it.
nlohmann::json described_gpu() {
  Results r;
  r.device.id = "test:0";
  r.device.type = "gpu";
  r.device.compute_units = 4;
  r.device.clock_mhz = 1000;
  r.device.global_mem_bytes = uint64_t{4} << 30;
  r.device.max_alloc_bytes = uint64_t{1} << 30;
  r.device.max_work_group_size = 256;
  r.device.global_cache_line_bytes = 64;
  auto& f = r.findings;
  f.push_back(make_finding("memory.cache_levels", 2.0, "", 0.9));
  f.push_back(make_finding("memory.L1.capacity_bytes", 16384.0, "B", 0.9));
  f.push_back(make_finding("memory.L1.latency_ns", 40.0, "ns", 0.9));
  f.push_back(make_finding("memory.L2.capacity_bytes", 1048576.0, "B", 0.8));
  f.push_back(make_finding("memory.L2.latency_ns", 150.0, "ns", 0.8));
  f.push_back(make_finding("memory.dram.latency_ns", 400.0, "ns", 0.9));
  f.push_back(make_finding("memory.tlb.reach_bytes", 8.0 * 1024 * 1024, "B", 0.6));
  f.push_back(make_finding("memory.tlb.page_bytes", 4096.0, "B", 0.5));
  f.push_back(make_finding("memory.tlb.miss_penalty_ns", 100.0, "ns", 0.6));
  return build_model(r).description;
}

Fit tlb_fit() {
  Fit f;
  ProbeFit p;
  p.probe = "tlb";
  p.missed = {"tlb.stride_2097152"};
  p.changes.push_back({"memory.tlb.page_bytes", "/memory/tlb/page_bytes", 4096, 65536, "measured",
                       {"memory.tlb.page_bytes"}});
  p.changes.push_back({"memory.tlb.entries", "/memory/tlb/entries", 2048, 128, "measured",
                       {"memory.tlb.reach_bytes"}});
  p.changes.push_back({"memory.tlb.replacement", "/memory/tlb/replacement", "lru", "random", "assumed", {}});
  f.probes.push_back(p);
  return f;
}

TEST(Fit, FittedValuesAreAnnotatedAndTheDescriptionStaysValid) {
  const auto d = with_fitted_values(described_gpu(), tlb_fit());
  const auto& t = d["memory"]["tlb"];
  EXPECT_EQ(t["page_bytes"]["value"], 65536);
  EXPECT_EQ(t["page_bytes"]["basis"], "fitted");
  EXPECT_NE(t["page_bytes"]["note"].get<std::string>().find("4096"), std::string::npos) << "the readers' value";
  EXPECT_NE(t["page_bytes"]["note"].get<std::string>().find("tlb.stride_2097152"), std::string::npos);
  EXPECT_EQ(t["replacement"]["value"], "random");
  const sim::SimConfig c = sim::parse_sim_config(d, "fitted.json");
  EXPECT_EQ(c.tlb.page_bytes, 65536u);
  EXPECT_EQ(c.tlb.entries, 128u);
}

TEST(Fit, ARecordedKeptFitReadsBackAndOneNotKeptReadsAsNone) {
  const Fit f = tlb_fit();
  const Fit back = recorded_fit(fit_json(f, "kept"));
  ASSERT_TRUE(back.changed());
  ASSERT_EQ(back.probes[0].changes.size(), 3u);
  EXPECT_EQ(back.probes[0].changes[1].at, "/memory/tlb/entries");
  EXPECT_EQ(back.probes[0].changes[1].fitted, 128);
  EXPECT_FALSE(recorded_fit(fit_json(f, "not kept: the fitted model reproduces 1 series, the readers' 2")).changed());
  // Hand-edited: a pointer that is not one, a change without a value.
  auto j = fit_json(f, "kept");
  j["probes"][0]["changes"][0]["at"] = "memory/tlb";
  j["probes"][0]["changes"][1].erase("fitted");
  EXPECT_EQ(recorded_fit(j).probes[0].changes.size(), 1u);
}

TEST(Fit, AKeptFitMovesTheFindingsItsValuesCameFromAndSaysWhatTheReaderRead) {
  const Fit f = tlb_fit();
  Fit applied = f;
  applied.description = with_fitted_values(described_gpu(), f);
  std::vector<Finding> findings = {make_finding("memory.tlb.page_bytes", 4096.0, "B", 0.5),
                                   make_finding("memory.tlb.reach_bytes", 8.0 * 1024 * 1024, "B", 0.6),
                                   make_finding("memory.L1.capacity_bytes", 16384.0, "B", 0.9)};
  apply_fit_to_findings(findings, applied);
  EXPECT_EQ(std::get<double>(findings[0].value), 65536);
  EXPECT_NE(findings[0].note.find("read 4096"), std::string::npos) << findings[0].note;
  // The model holds entries; the finding its reach, entries x page.
  EXPECT_EQ(std::get<double>(findings[1].value), 128.0 * 65536);
  EXPECT_EQ(std::get<double>(findings[2].value), 16384) << "not moved";
  EXPECT_TRUE(findings[2].note.empty());
}

}  // namespace
}  // namespace gpuscope::model
