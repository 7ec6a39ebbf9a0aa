// report.html's first screen (report/first_screen): the headline curves'
// data, with the known GPUs' published levels as steps beside them, and the
// section around the diagram.
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <string>

#include "report/first_screen.hpp"
#include "report/reference.hpp"
#include "report/results_json.hpp"

namespace gpuscope {
namespace {

using nlohmann::json;

const json& reference_named(const json& data, const std::string& name) {
  for (const auto& r : data["references"])
    if (r["name"] == name) return r;
  throw std::runtime_error("no reference " + name);
}

Results h200_example() {
  return read_results_file(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/h200/results.json");
}

TEST(HeadlineData, MeasuredCurvesAndEveryKnownProfile) {
  const Results r = h200_example();
  const json data = headline_data({{"NVIDIA H200", &r, false}});
  ASSERT_EQ(data["charts"].size(), 2u);
  EXPECT_EQ(data["charts"][0]["series"], "latency.global");
  EXPECT_EQ(data["charts"][1]["series"], "bandwidth.read");
  EXPECT_EQ(data["charts"][0]["chart"], "chart-latency.global");
  EXPECT_TRUE(data["charts"][0]["x"]["log"]);
  ASSERT_EQ(data["charts"][0]["traces"].size(), 1u);
  EXPECT_EQ(data["charts"][0]["traces"][0]["points"].size(), r.find_series("latency.global")->points.size());

  EXPECT_EQ(data["references"].size(), known_references().size());
  // The device's own profile is ticked, the others offered.
  for (const auto& ref : data["references"]) EXPECT_EQ(ref["checked"], ref["name"] == "H200") << ref["name"];
}

TEST(HeadlineData, PublishedLevelsAsStepsOverTheirFootprints) {
  const Results r = h200_example();
  const json data = headline_data({{"NVIDIA H200", &r, false}});
  const json& latency = reference_named(data, "H200")["curves"]["latency"];
  // L1 224 KiB at 20.5 ns, the L2 halves at 138 and 251 ns, DRAM at 382 ns
  // from the whole L2 on (data/reference/h200.json).
  ASSERT_EQ(latency["steps"].size(), 4u);
  EXPECT_EQ(latency["steps"][0][1], 229376.0);
  EXPECT_EQ(latency["steps"][0][2], 20.5);
  EXPECT_EQ(latency["steps"][1][0], 229376.0);
  EXPECT_EQ(latency["steps"][1][2], 138.0);
  EXPECT_EQ(latency["steps"][3][3], "DRAM");
  EXPECT_EQ(latency["steps"][3][0], 62914560.0);
  EXPECT_GE(latency["steps"][3][1].get<double>(), r.find_series("latency.global")->points.back().x);
  EXPECT_TRUE(latency["marks"].empty());
  // No published L1 or far-half bandwidth: their capacities are marks on the
  // bandwidth curve, between the L2's step and DRAM's.
  const json& bandwidth = reference_named(data, "H200")["curves"]["bandwidth"];
  ASSERT_EQ(bandwidth["marks"].size(), 2u);
  EXPECT_EQ(bandwidth["marks"][0][1], "L1");
  EXPECT_EQ(bandwidth["marks"][1][1], "L3");
  ASSERT_EQ(bandwidth["steps"].size(), 2u);
  EXPECT_EQ(bandwidth["steps"][0][2], 9850.0);
  EXPECT_EQ(bandwidth["steps"][1][3], "DRAM");

  // Capacities without latencies are marks; a published curve's points stay points.
  const json& mali = reference_named(data, "Mali-G52")["curves"]["latency"];
  EXPECT_TRUE(mali["steps"].empty());
  EXPECT_EQ(mali["marks"].size(), 2u);
  const json& adreno = reference_named(data, "Adreno 530")["curves"]["latency"];
  ASSERT_EQ(adreno["points"].size(), 2u);
  EXPECT_EQ(adreno["points"][0][1], 266.0);
  EXPECT_NE(adreno["points"][0][2].get<std::string>().find("Chips and Cheese"), std::string::npos);
}

TEST(HeadlineData, ComparedRunsAndAGivenReference) {
  const Results h200 = h200_example();
  const Results h100 = read_recorded("h100/full_run_first.json");
  const Results published = reference_as_results(find_reference("h100"));
  const json data =
      headline_data({{"NVIDIA H200", &h200, false}, {"H100 run", &h100, false}, {"H100", &published, true}});
  ASSERT_EQ(data["charts"][0]["traces"].size(), 2u) << "every measured run, not the reference";
  EXPECT_EQ(data["charts"][0]["traces"][1]["run"], 1);
  // The reference given is ticked and listed first, once; no other is ticked.
  EXPECT_EQ(data["references"][0]["name"], "H100");
  EXPECT_TRUE(data["references"][0]["checked"]);
  EXPECT_EQ(data["references"].size(), known_references().size());
  for (size_t i = 1; i < data["references"].size(); ++i) EXPECT_FALSE(data["references"][i]["checked"]);
}

TEST(FirstScreen, DiagramCurvesAndToggles) {
  const Results r = h200_example();
  const std::string html = first_screen_section({{"NVIDIA H200", &r, false}});
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"block-diagram\""),
            std::string::npos);
  EXPECT_NE(html.find("<canvas id=\"canvas-headline-latency\""), std::string::npos);
  EXPECT_NE(html.find("<canvas id=\"canvas-headline-bandwidth\""), std::string::npos);
  size_t toggles = 0, checked = 0;
  for (size_t at = html.find("class=\"reference-toggle\""); at != std::string::npos;
       at = html.find("class=\"reference-toggle\"", at + 1)) {
    ++toggles;
    checked += html.compare(html.find('>', at) - 8, 8, " checked") == 0 ? 1 : 0;
  }
  EXPECT_EQ(toggles, known_references().size());
  EXPECT_EQ(checked, 1u);
}

TEST(FirstScreen, NoCurvesNoToggles) {
  Results r;
  r.device.name = "Nothing measured";
  const std::string html = first_screen_section({{"x", &r, false}});
  EXPECT_NE(html.find("No findings to draw a diagram from."), std::string::npos);
  EXPECT_NE(html.find("no latency or bandwidth curve"), std::string::npos);
  EXPECT_EQ(html.find("reference-toggle"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
