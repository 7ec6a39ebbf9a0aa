// What could not be measured (report/unmeasured), from each place results.json
// keeps a reason, and its place in report.html and report.md.
#include <gtest/gtest.h>

#include <string>

#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/unmeasured.hpp"

namespace gpuscope {
namespace {

Series with_meta(const std::string& id, const std::string& probe, nlohmann::json meta) {
  Series s;
  s.id = id;
  s.probe = probe;
  s.meta = std::move(meta);
  return s;
}

Results sample() {
  Results r;
  r.device.name = "Example";
  r.skipped = {{"texture", "unsupported: the device has no image support"}};
  r.series = {
      with_meta(
          "atomics.ping_pong.global", "atomics",
          {{"not_measurable", {{"32", "no forward progress between the players"}, {"64", "likewise"}}}}),
      with_meta("compute.summary", "compute",
                {{"unsupported",
                  nlohmann::json::array(
                      {{{"series", "compute.fp16.fma"}, {"values_per_op", 2}, {"reason", "no fp16"}}})},
                 {"not_measured_time_budget", {"compute.fp32.div x1", "compute.fp32.sqrt x1"}}}),
      with_meta("icache.binary", "icache", {{"unsupported", "no program binaries"}}),
      with_meta("texture.latency", "texture", {{"sharing_skipped", "no first texture cache level"}}),
      with_meta("bandwidth.read", "bandwidth", {{"cut_short", "the probe's time budget ran out"}}),
      with_meta("occupancy.registers", "occupancy",
                {{"stopped", "the kernel's largest work-group is too small"}}),
      with_meta("transfer.svm.map", "transfer", {{"error", "CL_OUT_OF_RESOURCES"}}),
      with_meta("latency.global", "latency", {{"stride_bytes", 64}}),
  };
  return r;
}

TEST(Unmeasured, EveryRecordedReason) {
  const auto items = unmeasured(sample());
  ASSERT_EQ(items.size(), 10u);
  EXPECT_EQ(items[0].what, "texture");
  EXPECT_EQ(items[0].series, "");
  EXPECT_EQ(items[1].what, "atomics.ping_pong.global (32-bit)");
  EXPECT_EQ(items[1].reason, "no forward progress between the players");
  EXPECT_EQ(items[1].series, "atomics.ping_pong.global");
  EXPECT_EQ(items[2].what, "atomics.ping_pong.global (64-bit)");
  EXPECT_EQ(items[3].what, "compute.fp16.fma x2");
  EXPECT_EQ(items[3].reason, "no fp16");
  EXPECT_EQ(items[4].what, "compute: 2 kernels");
  EXPECT_NE(items[4].reason.find("compute.fp32.div x1, compute.fp32.sqrt x1"), std::string::npos);
  EXPECT_EQ(items[5].reason, "no program binaries");
  EXPECT_EQ(items[6].what, "texture.latency sharing experiment");
  EXPECT_EQ(items[7].what, "bandwidth.read (cut short)");
  EXPECT_EQ(items[8].what, "occupancy.registers (stopped early)");
  EXPECT_EQ(items[9].reason, "CL_OUT_OF_RESOURCES");
}

TEST(Unmeasured, OddMetaIsSkippedNotThrown) {
  Results r;
  r.series = {with_meta("a", "a", {{"not_measurable", "not an object"}}),
              with_meta("b", "b", nlohmann::json::array()),
              with_meta("c", "c", {{"unsupported", nlohmann::json::array({1, "x"})}})};
  EXPECT_TRUE(unmeasured(r).empty());
}

TEST(Unmeasured, ShownInBothReports) {
  const Results r = sample();
  const std::string html = render_html_report({{"Example", &r, false}});
  EXPECT_NE(html.find("<h2 id=\"not-measured\">"), std::string::npos);
  EXPECT_NE(html.find("atomics.ping_pong.global (32-bit)</td><td>no forward progress"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#chart-atomics.ping_pong.global\">"), std::string::npos);
  const std::string md = format_markdown({{"Example", &r, false}});
  EXPECT_NE(md.find("### Not measured"), std::string::npos);
  EXPECT_NE(md.find("- atomics.ping_pong.global (32-bit): no forward progress"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
