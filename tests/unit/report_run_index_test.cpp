// report/run_index: lookups by id as Results::find_* answers them, and the
// reports that use it linear in findings (issue 46: 32,000 findings took
// 55 s in report and compare, 8,000 took 7 s: quadratic).
#include "report/run_index.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/terminal_summary.hpp"
#include "support/findings.hpp"

namespace gpuscope {
namespace {

using test::make_finding;

TEST(RunIndex, FindsWhatResultsFindsAndWhatCitesASeries) {
  Results r;
  r.series.resize(2);
  r.series[0].id = "latency.global";
  r.series[1].id = "latency.global";  // a repeated id: the first is found
  r.findings = {make_finding("memory.L1.latency_ns", 20.0, "ns", 0.9, {}, {}, {"latency.global", "latency.global"}),
                make_finding("memory.L1.latency_ns", 30.0, "ns", 0.9),
                make_finding("memory.L2.latency_ns", 90.0, "ns", 0.9, {}, {}, {"latency.global"})};
  const RunIndex index(r);
  EXPECT_EQ(index.finding("memory.L1.latency_ns"), r.find_finding("memory.L1.latency_ns"));
  EXPECT_EQ(index.finding("memory.L1.latency_ns"), &r.findings[0]);
  EXPECT_EQ(index.finding("nothing"), nullptr);
  EXPECT_EQ(index.series("latency.global"), &r.series[0]);
  EXPECT_EQ(index.series("nothing"), nullptr);
  ASSERT_EQ(index.citing("latency.global").size(), 2u) << "a finding naming a series twice cites it once";
  EXPECT_EQ(index.citing("latency.global")[0], &r.findings[0]);
  EXPECT_EQ(index.citing("latency.global")[1], &r.findings[2]);
  EXPECT_TRUE(index.citing("nothing").empty());
}

// `n` findings of made-up ids, every one citing one series.
Results many_findings(size_t n) {
  Results r;
  r.device.id = "sim:x";
  r.device.name = "Many";
  Series s;
  s.id = "latency.global";
  s.x = {"footprint", "B"};
  s.y = {"latency", "ns"};
  s.points = {{1024, 10, {10}}, {2048, 11, {11}}};
  r.series.push_back(s);
  for (size_t i = 0; i < n; ++i)
    r.findings.push_back(make_finding("x.f" + std::to_string(i) + ".latency_ns", 10.0 + static_cast<double>(i),
                                      "ns", 0.9, 9.0, 11.0 + static_cast<double>(i), {"latency.global"}));
  return r;
}

// Seconds to write every report of a run beside a second run of the same
// findings: the page, the Markdown and the terminal comparison.
double seconds_for_reports(size_t n) {
  const Results a = many_findings(n), b = many_findings(n);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ReportRun> runs = {{"a", &a, false}, {"b", &b, false}};
  const size_t bytes = render_html_report(runs).size() + format_markdown(runs).size() + format_comparison(runs).size() +
                       format_summary(a, {}).size();
  EXPECT_GT(bytes, n * 100);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Eight times the findings take about eight times as long where the reports
// are linear, 64 times where quadratic; 24 leaves room for a loaded machine.
TEST(RunIndex, ReportsAreLinearInFindings) {
  seconds_for_reports(500);  // warm up
  const double small = seconds_for_reports(2000);
  const double large = seconds_for_reports(16000);
  EXPECT_LT(large, 24 * small) << "2,000 findings: " << small << " s; 16,000: " << large << " s";
}

}  // namespace
}  // namespace gpuscope
