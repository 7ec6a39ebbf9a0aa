// analysis/analyze: series that break the promises every analysis relies on
// are set aside with a reason; no value in any field of a series crashes an
// analysis.
#include "analysis/analyze.hpp"

#include "analysis/execution.hpp"
#include "core/error.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> reasons(const Results& r) {
  std::vector<std::string> out;
  for (const Skipped& s : analysis::unusable_series(r)) out.push_back(s.reason);
  return out;
}

TEST(Analyze, NegativePartitionThroughputIsSetAsideNotACrash) {
  // The reproducer: y = -1 in a partition series made analyze die (SIGSEGV).
  Results r = read_recorded("h100/divergence_triples_first.json");
  for (auto& s : r.series)
    if (s.id == "divergence.partition_pairs" || s.id == "divergence.partition_triples") s.points[1].y = -1;
  EXPECT_EQ(reasons(r),
            (std::vector<std::string>{
                "series divergence.partition_pairs not analysed: points[1].y: -1 is negative",
                "series divergence.partition_triples not analysed: points[1].y: -1 is negative"}));
  const auto findings = analysis::analyze_all(r);
  EXPECT_FALSE(findings.empty());
}

TEST(Analyze, PartitionFitSurvivesValuesOutsideItsModel) {
  // Called directly, past the screen: negative, zero and non-finite ratios.
  for (double bad : {-1.0, 0.0, kNaN, kInf, -kInf, 1e300}) {
    Series a, b;
    a.id = "divergence.partition";
    b.id = "divergence.partition_pairs";
    a.meta["active_waves_per_group"] = 4;
    b.meta["active_waves_per_group"] = bad == 1e300 ? 1e300 : 2.0;
    a.points = {{1, 100, {}}, {2, bad, {}}};
    b.points = {{1, 100, {}}, {2, bad, {}}, {4, bad, {}}};
    EXPECT_NO_THROW(analysis::partition_findings({&a, &b})) << bad;
  }
}

TEST(Analyze, EveryPromiseBrokenIsNamed) {
  Series s;
  s.id = "latency.global";
  s.probe = "latency";
  s.points = {{1024, 5, {5}}, {2048, 6, {6}}};
  const auto reason_with = [&](auto edit) {
    Results r;
    r.series = {s};
    edit(r.series[0]);
    const auto rs = reasons(r);
    return rs.empty() ? std::string() : rs.front();
  };
  EXPECT_EQ(reason_with([](Series&) {}), "");
  EXPECT_NE(reason_with([](Series& t) { t.points[1].x = kNaN; }).find("points[1].x: nan is not a finite"),
            std::string::npos);
  EXPECT_NE(reason_with([](Series& t) { t.points[0].y = kInf; }).find("points[0].y: inf is not a finite"),
            std::string::npos);
  EXPECT_NE(reason_with([](Series& t) {
              t.points[0].samples[0] = -2;
            }).find("points[0].samples[0]: -2 is negative"),
            std::string::npos);
  EXPECT_NE(reason_with([](Series& t) { t.points[1].y = 1e300; }).find("is larger than 1e+15"),
            std::string::npos);
  EXPECT_NE(reason_with([](Series& t) { t.points[1].x = 1024; }).find("x must increase"), std::string::npos);
  EXPECT_NE(reason_with([](Series& t) {
              t.points.resize(analysis::kMaxSeriesPoints + 1, t.points[0]);
            }).find("points, more than 4096"),
            std::string::npos);
  Results twice;
  twice.series = {s, s};
  EXPECT_EQ(reasons(twice), std::vector<std::string>{
                                "series latency.global not analysed: an earlier series has the same id"});
}

// Each series of a whole real run, one point's x, y or sample set to a value
// from outside the promises (or an awkward one inside them): analysis goes
// on, and sets aside exactly the series broken.
TEST(Analyze, AnyValueInAnySeriesOfAWholeRunIsSurvived) {
  const Results run = read_recorded("pocl_zen5/pthread_full_run.json");
  const double values[] = {-1, kNaN, kInf, -kInf, 1e300, 0, 5e-324, -0.0, 1e15};
  for (size_t i = 0; i < run.series.size(); ++i) {
    Results r = run;
    Series& s = r.series[i];
    if (s.points.empty()) continue;
    const double v = values[i % std::size(values)];
    Point& p = s.points[s.points.size() / 2];
    const bool outside = !(v >= 0) || v > analysis::kMaxSeriesValue;
    if (i % 3 == 0 && !p.samples.empty())
      p.samples.back() = v;
    else if (i % 3 == 1 || s.points.size() == 1)
      p.y = v;
    else {
      p.y = v;  // x must stay increasing: the y field instead, and a sample
      if (!p.samples.empty()) p.samples.front() = v;
    }
    SCOPED_TRACE(s.id + " <- " + std::to_string(v));
    const auto set_aside = reasons(r);
    EXPECT_EQ(set_aside.size(), outside ? 1u : 0u);
    EXPECT_NO_FATAL_FAILURE(analysis::analyze_all(r));
  }
}

// Found by fuzzing: meta numbers shown in notes were read as integers, and a
// double past their range (compute_units: 1e300) is undefined behaviour.
TEST(Analyze, MetaNumbersPastAnyIntegerAreShownAsGiven) {
  Results r = read_results_file(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/h200/results.json");
  for (auto& s : r.series)
    if (s.id == "bandwidth.workgroups") {
      s.meta["compute_units"] = 1e300;
      s.meta["group_size"] = -1e300;
    }
  const auto findings = analysis::analyze_all(r);
  const auto note_of = [&](const std::string& id) {
    for (const auto& f : findings)
      if (f.id == id) return f.note;
    return std::string("(no finding)");
  };
  EXPECT_EQ(note_of("memory.bandwidth.workgroup_period"), "the driver reports 1e+300 compute units");
  EXPECT_NE(note_of("memory.bandwidth.saturating_workgroups").find("-1e+300 work-items per group"),
            std::string::npos);
}

TEST(Analyze, MetaOfTheWrongTypeIsAUsageError) {
  Results r = read_recorded("h100/divergence_triples_first.json");
  for (auto& s : r.series) s.meta["active_waves_per_group"] = "many";
  EXPECT_THROW(analysis::analyze_all(r), UsageError);
}

}  // namespace
}  // namespace gpuscope
