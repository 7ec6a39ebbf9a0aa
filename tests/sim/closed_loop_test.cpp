// The closed loop end to end through the command line (docs/closed-loop.md):
// a run on a preset writes model.json, replays its probes on it and
// records how well the model reproduces each series; the model runs as a
// device of its own; analyze holds the findings to a recorded replay again;
// a hand-edited results.json with contradicting findings gives a model that
// names them.
#include "backends/sim/sim_config.hpp"
#include "core/results.hpp"
#include "report/results_json.hpp"

#include "support/cli.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using test::run_gpuscope;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

const nlohmann::json* replayed(const nlohmann::json& results, const std::string& id) {
  for (const auto& s : results["model"]["replay"]["series"])
    if (s["id"] == id) return &s;
  return nullptr;
}

// The latency chase on Mali-G52: the model's staircase is the measured one
// at the measured points, so it is reproduced within the 5% the loop holds
// latencies to, and model.json runs as a device of its own.
TEST(ClosedLoop, ARunWritesItsModelAndTheModelReproducesTheChase) {
  const auto dir = test::fresh_temp_dir("closed_loop_run");
  const auto out = dir / "run";
  const auto r = run_gpuscope("run --device sim:mali-g52 --probes latency,compute --quick --quiet --out " +
                              out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(out / "model.json")) << r.output;
  EXPECT_NE(r.output.find("Model: model.json reproduces"), std::string::npos) << r.output;

  // The sim's strict reader accepts it; every value carries its basis.
  const sim::SimConfig model = sim::load_sim_config_file((out / "model.json").string());
  EXPECT_GE(model.caches.size(), 2u);

  const auto results = read_json(out / "results.json");
  ASSERT_TRUE(results.contains("model")) << results.dump().substr(0, 400);
  const auto* chase = replayed(results, "latency.global");
  ASSERT_NE(chase, nullptr) << results["model"].dump(1);
  EXPECT_EQ((*chase)["interpolated"], 0) << "the replay measures at the measured points";
  EXPECT_TRUE((*chase)["reproduced"].get<bool>()) << chase->dump(1);
  EXPECT_LE((*chase)["median_error"].get<double>(), 0.05);

  // "What if": the model is a device.
  const auto again = run_gpuscope("run --device sim:" + (out / "model.json").string() +
                                  " --probes latency --quick --quiet --no-replay --out " +
                                  (dir / "what_if").string());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(fs::exists(dir / "what_if" / "model.json"));
}

// analyze without --replay holds the recomputed findings to the replay the
// run recorded: the same confidences come back.
TEST(ClosedLoop, AnalyzeHoldsTheFindingsToTheRecordedReplayAgain) {
  const auto dir = test::fresh_temp_dir("closed_loop_analyze");
  const auto out = dir / "run";
  ASSERT_EQ(run_gpuscope("run --device sim:adreno-530 --probes latency --quick --quiet --out " + out.string())
                .exit_code,
            0);
  const auto again = dir / "again";
  const auto a = run_gpuscope("analyze " + (out / "results.json").string() + " --out " + again.string());
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const Results first = read_results_file((out / "results.json").string());
  const Results second = read_results_file((again / "results.json").string());
  ASSERT_EQ(first.findings.size(), second.findings.size());
  for (size_t i = 0; i < first.findings.size(); ++i) {
    EXPECT_EQ(first.findings[i].id, second.findings[i].id);
    EXPECT_DOUBLE_EQ(first.findings[i].confidence, second.findings[i].confidence) << first.findings[i].id;
  }
  EXPECT_TRUE(fs::exists(again / "model.json"));
}

// A hand-edited results.json whose L2 is faster than its L1: the model
// names the contradiction, stays a valid description, and nothing crashes.
TEST(ClosedLoop, ContradictingFindingsGiveAModelThatNamesThem) {
  const auto dir = test::fresh_temp_dir("closed_loop_contradiction");
  const auto out = dir / "run";
  ASSERT_EQ(run_gpuscope("run --device sim:mali-g52 --probes latency --quick --quiet --no-replay --out " +
                         out.string())
                .exit_code,
            0);
  Results r = read_results_file((out / "results.json").string());
  // Make the L2's plateau faster than the L1's in the stored series: the
  // analysis then reads the contradiction itself.
  auto* l1 = r.find_finding("memory.L1.latency_ns");
  ASSERT_NE(l1, nullptr);
  for (auto& s : r.series)
    if (s.id == "latency.global")
      for (auto& p : s.points)
        if (p.y > 1.5 * std::get<double>(l1->value)) {
          p.y = 0.5 * std::get<double>(l1->value);
          for (auto& v : p.samples) v = p.y;
        }
  const auto edited = dir / "edited.json";
  write_results_file_atomic(r, edited.string());
  const auto again = dir / "again";
  const auto a = run_gpuscope("analyze " + edited.string() + " --out " + again.string());
  EXPECT_NE(a.exit_code, 1) << a.output;
  EXPECT_NE(a.exit_code, -1) << a.output;
  if (a.exit_code == 0) {
    EXPECT_NO_THROW(sim::load_sim_config_file((again / "model.json").string()));
  }
}

}  // namespace
}  // namespace gpuscope
