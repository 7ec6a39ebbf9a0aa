// The reports (issue 6): the terminal spec sheet and the Markdown summary
// against golden files, report.html's structure (every series and finding of
// a real run present, hostile driver strings kept as data, no network), the
// reference profiles' validation, and the report/compare commands' contract.
//
// Golden files live in tests/golden/. After an intended change to a report's
// layout, regenerate them with GPUSCOPE_UPDATE_GOLDEN=1 and review the diff.
#include "analysis/analyze.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "core/finding_catalogue.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/reference.hpp"
#include "report/format.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"

#include "support/temp_dir.hpp"

#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using test::make_finding;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path golden_path(const std::string& name) {
  return fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "golden" / name;
}

// Compares `actual` with tests/golden/NAME line by line; a mismatch names the
// first differing line and writes the actual text beside the build so that
// `diff tests/golden/NAME <that file>` shows the whole change.
void expect_golden(const std::string& name, const std::string& actual) {
  const fs::path golden = golden_path(name);
  if (std::getenv("GPUSCOPE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with GPUSCOPE_UPDATE_GOLDEN=1 to create it";
  const std::string expected = read_file(golden);
  if (expected == actual) return;
  const fs::path dump = fs::temp_directory_path() / ("gpuscope_actual_" + name);
  std::ofstream(dump, std::ios::binary) << actual;
  std::istringstream e(expected), a(actual);
  std::string el, al;
  int line = 0;
  while (true) {
    ++line;
    const bool he = static_cast<bool>(std::getline(e, el));
    const bool ha = static_cast<bool>(std::getline(a, al));
    if (!he && !ha) break;
    if (!he || !ha || el != al) {
      ADD_FAILURE() << name << " differs from the golden file at line " << line << ":\n"
                    << "  expected: " << (he ? el : "<end of file>") << "\n"
                    << "  actual:   " << (ha ? al : "<end of file>") << "\n"
                    << "whole diff: diff " << golden << " " << dump
                    << "\n(if the change is intended: GPUSCOPE_UPDATE_GOLDEN=1 and review the diff)";
      return;
    }
  }
  ADD_FAILURE() << name << " differs from the golden file only in its final newline; actual in " << dump;
}

// A small fixed run: every area, intervals, a guess, a list, a boolean, a
// skipped probe whose reason has a line break and a '|'.
Results small_results() {
  Results r;
  r.tool_version = "0.1.0";
  r.device.id = "opencl:0:0";
  r.device.name = "Example GPU 9000";
  r.device.vendor = "Example Corp";
  r.device.type = "gpu";
  r.device.api = "OpenCL 3.0";
  r.device.driver_version = "1.2.3";
  r.device.compute_units = 40;
  r.device.clock_mhz = 1500;
  r.device.global_mem_bytes = 8ull << 30;
  r.run["command"] = "gpuscope run --quick";
  Series s;
  s.id = "latency.global";
  s.probe = "latency";
  s.x = {"footprint", "B"};
  s.y = {"latency", "ns"};
  for (double x : {1024.0, 16384.0, 262144.0, 4194304.0})
    s.points.push_back({x, x < 65536 ? 20.0 : 300.0, {}});
  r.series.push_back(s);
  r.findings = {
      make_finding("memory.L1.capacity_bytes", 49152.0, "B", 0.9, 45056.0, 53248.0, {"latency.global"}),
      make_finding("memory.L1.latency_ns", 20.0, "ns", 0.95, 19.5, 20.5, {"latency.global"}),
      make_finding("memory.L2.capacity_bytes", 4.0 * 1024 * 1024, "B", 0.35, 3.0 * 1024 * 1024, 5.0 * 1024 * 1024,
              {"latency.global"}, "a soft knee"),
      make_finding("memory.dram.bandwidth_gbps", 448.0, "GB/s", 0.85),
      make_finding("local.latency_ns", 12.5, "ns", 0.8),
      make_finding("texture.shares_l1", true, "", 0.75),
      make_finding("compute.fp32.fma.throughput_gops", 12000.0, "Gop/s", 0.9),
      make_finding("exec.wave_width", 32.0, "", 0.99),
      make_finding("exec.registers.occupancy_cliffs", std::vector<double>{32, 64, 128}, "", 0.4),
      make_finding("launch.dispatch_us", 4.2, "us", 0.7),
      make_finding("host.zero_copy", false, "", 0.8),
  };
  r.skipped = {{"icache", "build failure: too large | see log\nlog line"}};
  return r;
}

TEST(ReportGolden, TerminalSummaryWithoutColour) {
  const std::string text = format_summary(small_results(), {false});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "colour codes in a colourless summary";
  expect_golden("summary_small.txt", text);
}

TEST(ReportGolden, MarkdownSummary) {
  const Results r = small_results();
  expect_golden("summary_small.md", format_markdown({{"Example GPU 9000", &r, false}}));
}

TEST(ReportGolden, MarkdownWithReferenceBeside) {
  const Results r = small_results();
  const Results ref = reference_as_results(find_reference("h100"));
  expect_golden("summary_small_vs_h100.md",
                format_markdown({{"Example GPU 9000", &r, false}, {"H100", &ref, true}}));
}

// The real H200 run, analysed again: analysis may change its numbers, so
// this checks structure (each area's heading, some headline rows), not text.
class H200Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    r_ = new Results(read_recorded("h200/full_run_cold_cache.json"));
    r_->findings = analysis::analyze_all(*r_);
  }
  static void TearDownTestSuite() {
    delete r_;
    r_ = nullptr;
  }
  static Results* r_;
};
Results* H200Report::r_ = nullptr;

TEST_F(H200Report, SummaryAndMarkdownHaveEveryAreaAndHeadlineRows) {
  const std::string text = format_summary(*r_, {false});
  const std::string md = format_markdown({{"H200", r_, false}});
  for (const char* area :
       {"Memory hierarchy", "Local memory and texture", "Compute", "Execution", "Host and system"}) {
    EXPECT_NE(text.find(area), std::string::npos) << area << " missing from the summary:\n" << text;
    EXPECT_NE(md.find(std::string("### ") + area), std::string::npos) << area << " heading missing:\n" << md;
  }
  for (const char* id : {"memory.L1.latency_ns", "memory.dram.bandwidth_gbps", "exec.wave_width",
                         "compute.fp32.fma.throughput_gops"}) {
    const Finding* f = r_->find_finding(id);
    ASSERT_NE(f, nullptr) << id;
    // Memory levels are a table (level, capacity, latency, bandwidth): the
    // value is what every layout must show.
    EXPECT_NE(text.find(format_value(*f)), std::string::npos) << id << "'s value " << format_value(*f);
    EXPECT_NE(md.find(format_value(*f)), std::string::npos) << id << "'s value " << format_value(*f);
  }
  for (const char* id : {"exec.wave_width", "compute.fp32.fma.throughput_gops"}) {
    const std::string label = describe_finding(id).name;
    EXPECT_NE(text.find(label), std::string::npos) << label << " missing from the summary";
    EXPECT_NE(md.find(label), std::string::npos) << label << " missing from the Markdown";
  }
  EXPECT_NE(text.find("H200"), std::string::npos);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST_F(H200Report, HtmlHasEverySeriesAndFinding) {
  const std::string html = render_html_report({{"H200", r_, false}});
  ASSERT_FALSE(r_->series.empty());
  ASSERT_FALSE(r_->findings.empty());
  for (const auto& s : r_->series) {
    EXPECT_NE(html.find("\"" + s.id + "\""), std::string::npos) << "series " << s.id;
    EXPECT_NE(html.find(chart_anchor(s.id)), std::string::npos) << "chart of " << s.id;
  }
  for (const auto& f : r_->findings) EXPECT_NE(html.find(f.id), std::string::npos) << "finding " << f.id;
}

std::string embedded_json(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"gpuscope-data\">";
  const size_t a = html.find(open);
  if (a == std::string::npos) return "";
  const size_t b = html.find("</script>", a);
  return html.substr(a + open.size(), b - a - open.size());
}

TEST(ReportHtml, HostileDriverStringsStayData) {
  Results r = small_results();
  r.device.name = "<script>alert(1)</script>";
  r.device.vendor = "Evil \"quoted\" 'vendor' & </script><script>alert(2)</script>";
  r.device.driver_version = "</script>&amp;<!--";
  r.series[0].meta["note"] = "</script><script>alert(3)</script>";
  const std::string html = render_html_report({{r.device.name, &r, false}});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  const std::string data = embedded_json(html);
  ASSERT_FALSE(data.empty()) << "no embedded data";
  EXPECT_EQ(data.find('<'), std::string::npos) << "raw '<' inside the embedded JSON";
  // The embedded JSON parses back to the hostile strings: escaped, not lost.
  const auto j = nlohmann::json::parse(data);
  EXPECT_NE(j.dump().find("<script>alert(1)</script>"), std::string::npos);
  // Every <script> element closes where it should: opens and closes pair up.
  size_t opens = 0, closes = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++opens;
  for (size_t at = html.find("</script"); at != std::string::npos; at = html.find("</script", at + 1))
    ++closes;
  EXPECT_EQ(opens, closes);
  EXPECT_NE(html.find(html_escape(r.device.name)), std::string::npos);
  const std::string md = format_markdown({{r.device.name, &r, false}});
  EXPECT_EQ(md.find("<script"), std::string::npos);
}

TEST(ReportHtml, SelfContained) {
  const Results r = small_results();
  const std::string html = render_html_report({{"x", &r, false}});
  for (const char* bad : {"src=\"http", "src='http", "href=\"http", "href='http", "@import", "url(http"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  EXPECT_NE(html.find("chart-latency.global"), std::string::npos);
}

TEST(ReferenceProfiles, EveryShippedFileLoads) {
  const fs::path dir = fs::path(GPUSCOPE_SOURCE_DIR) / "data" / "reference";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++n;
    EXPECT_NO_THROW({
      const ReferenceProfile p = find_reference(e.path().string());
      EXPECT_FALSE(p.values.empty()) << e.path();
    }) << e.path();
  }
  EXPECT_GE(n, 7);
  EXPECT_EQ(known_references().size(), static_cast<size_t>(n));
  EXPECT_EQ(find_reference("H100").name, "H100");
}

nlohmann::json good_profile() {
  return nlohmann::json::parse(R"({
    "schema": "gpuscope.reference/1", "name": "Test", "device": {"name": "Test GPU"}, "about": "test",
    "values": [
      {"id": "memory.L1.latency_ns", "value": 20, "low": 18, "high": 22, "unit": "ns", "kind": "measurement", "source": "me"},
      {"id": "exec.wave_width", "value": 32, "unit": "", "kind": "spec", "source": "guide"}
    ],
    "series": []})");
}

// The error must name the offending field.
void expect_rejected(const nlohmann::json& j, const std::string& must_name) {
  try {
    reference_from_json(j, "test.json");
    ADD_FAILURE() << "accepted a bad profile; expected an error naming " << must_name;
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.json"), std::string::npos) << what;
    EXPECT_NE(what.find(must_name), std::string::npos) << what;
  }
}

TEST(ReferenceProfiles, BadProfilesAreRejectedNamingTheField) {
  EXPECT_NO_THROW(reference_from_json(good_profile(), "test.json"));
  auto unit = good_profile();
  unit["values"][0]["unit"] = "furlongs";
  expect_rejected(unit, "values[0].unit");
  auto interval = good_profile();
  interval["values"][0]["low"] = 25;
  interval["values"][0]["high"] = 15;
  expect_rejected(interval, "values[0]");
  auto dup = good_profile();
  dup["values"][1] = dup["values"][0];
  expect_rejected(dup, "values[1]");
  auto nosource = good_profile();
  nosource["values"][1].erase("source");
  expect_rejected(nosource, "values[1]");
  expect_rejected(nosource, "source");
  auto nokind = good_profile();
  nokind["values"][0]["kind"] = "rumour";
  expect_rejected(nokind, "values[0].kind");
}

// ---- the commands ----

TEST(ReportCli, ReportWritesOut) {
  const fs::path out = test::fresh_temp_dir("reports_report") / "x.html";
  const auto r =
      test::run_gpuscope("report " + recorded_path("pocl_xeon/basic_full_run_quick_first.json") + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(out)) << r.output;
  EXPECT_NE(read_file(out).find("gpuscope-data"), std::string::npos);
  const fs::path md = out.parent_path() / "x.md";
  const auto m = test::run_gpuscope("report " + recorded_path("pocl_xeon/basic_full_run_quick_first.json") +
                                    " --format md --out " + md.string());
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(read_file(md).find("### Memory hierarchy"), std::string::npos);
}

TEST(ReportCli, ReportOnMissingFileExits2) {
  const auto r = test::run_gpuscope("report " + (test::fresh_temp_dir("reports_missing") / "nope.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nope.json"), std::string::npos) << r.output;
}

TEST(ReportCli, CompareTwoRunsPrintsRatios) {
  const fs::path out = test::fresh_temp_dir("reports_compare") / "cmp.html";
  const auto r = test::run_gpuscope("compare " + recorded_path("h200/full_run_cold_cache.json") + " " +
                                    recorded_path("h200/full_run_warm_cache.json") + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[2]/[1]"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out));
  const auto h =
      test::run_gpuscope("compare " + recorded_path("h200/full_run_cold_cache.json") + " h100 --out " + out.string());
  EXPECT_EQ(h.exit_code, 0) << h.output;
}

TEST(ReportCli, UnknownCompareDeviceExits2) {
  const auto r =
      test::run_gpuscope("report " + recorded_path("pocl_xeon/basic_full_run_quick_first.json") +
                         " --compare nosuchdevice --out " + (test::fresh_temp_dir("reports_nosuch") / "r.html").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nosuchdevice"), std::string::npos) << r.output;
}

TEST(ReportCli, ListReferences) {
  const auto r = test::run_gpuscope("list --references");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("H100"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("H200"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gpuscope
