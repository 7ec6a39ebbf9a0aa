// The block diagram's structure (report/block_diagram) and the SVG drawn from
// it (report/block_diagram_svg), on the recorded H100 and H200 runs and on a
// run of every sim preset, whose descriptions say what the diagram must show:
// every cache level present, each placed per compute unit or shared as the
// description has it wherever the run measured it, uncertain values marked.
#include "support/temp_dir.hpp"

#include "support/findings.hpp"
#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "backends/sim/sim_config.hpp"
#include "support/cli.hpp"
#include "report/block_diagram.hpp"
#include "report/block_diagram_svg.hpp"
#include "report/block_diagram_text.hpp"
#include "report/html_report.hpp"
#include "report/results_json.hpp"
#include "core/finding_catalogue.hpp"
#include "report/format.hpp"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

const DiagramBox& box(const BlockDiagram& d, const std::string& id) {
  const DiagramBox* b = d.find(id);
  if (b == nullptr) throw std::runtime_error("no box " + id);
  return *b;
}

const DiagramField* field(const DiagramBox& b, const std::string& finding_id) {
  for (const auto& f : b.fields)
    if (f.finding_id == finding_id) return &f;
  return nullptr;
}

// A box of the SVG: its <g> element's attributes and first <rect>.
struct SvgBox {
  bool uncertain = false;
  std::string href;  // of the box's own link
  double x = 0, y = 0, w = 0, h = 0;
  bool dashed = false;
  std::vector<std::string> finding_links;
};

std::map<std::string, SvgBox> svg_boxes(const std::string& svg) {
  std::map<std::string, SvgBox> out;
  const std::regex group(R"re(<g class="box( uncertain)?" data-box="([^"]+)">([\s\S]*?)</g>)re");
  const std::regex box_link(R"re(<a href="([^"]*)" data-box="[^"]*" class="box-link">)re");
  const std::regex rect(
      R"re(<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"([^>]*)/>)re");
  const std::regex value_link(R"re(<a href="([^"]*)" data-box="[^"]*" data-finding="([^"]+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), group), end; it != end; ++it) {
    SvgBox b;
    b.uncertain = (*it)[1].matched;
    const std::string body = (*it)[3];
    std::smatch m;
    if (std::regex_search(body, m, box_link)) b.href = m[1];
    if (std::regex_search(body, m, rect)) {
      b.x = std::stod(m[1]);
      b.y = std::stod(m[2]);
      b.w = std::stod(m[3]);
      b.h = std::stod(m[4]);
      b.dashed = m[5].str().find("stroke-dasharray") != std::string::npos;
    }
    for (std::sregex_iterator v(body.begin(), body.end(), value_link); v != end; ++v)
      b.finding_links.push_back((*v)[1]);
    out[(*it)[2]] = b;
  }
  return out;
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// What every diagram must satisfy, whatever the device: boxes linked to a
// chart the run recorded, uncertainty marked exactly where the defining
// finding is a guess, every cache level with a box, and the SVG drawing each
// box once, dashed when uncertain, inside-the-unit boxes above shared ones.
void expect_consistent(const Results& r, const BlockDiagram& d) {
  ASSERT_FALSE(d.boxes.empty());
  EXPECT_EQ(d.boxes.front().id, "cu");
  for (const auto& b : d.boxes) {
    SCOPED_TRACE(b.id);
    ASSERT_FALSE(b.fields.empty());
    EXPECT_NE(r.find_series(b.chart), nullptr) << "box links to a chart the run does not have: " << b.chart;
    for (const auto& f : b.fields) {
      const Finding* finding = r.find_finding(f.finding_id);
      ASSERT_NE(finding, nullptr) << f.finding_id;
      EXPECT_EQ(f.uncertain, is_low_confidence(*finding)) << f.finding_id;
    }
    EXPECT_EQ(b.uncertain, b.fields.front().uncertain);
  }
  for (int n = 1; n <= 8; ++n) {
    const std::string level = "memory.L" + std::to_string(n);
    EXPECT_EQ(d.find(level) != nullptr, r.find_finding(level + ".capacity_bytes") != nullptr) << level;
  }

  const std::string svg = render_block_diagram_svg(d);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count_of(svg, "<g "), count_of(svg, "</g>"));
  EXPECT_EQ(count_of(svg, "<a "), count_of(svg, "</a>"));
  const auto drawn = svg_boxes(svg);
  EXPECT_EQ(drawn.size(), d.boxes.size());
  double lowest_per_unit = 0, highest_shared = 1e9;
  for (const auto& b : d.boxes) {
    SCOPED_TRACE(b.id);
    ASSERT_EQ(drawn.count(b.id), 1u);
    const SvgBox& s = drawn.at(b.id);
    EXPECT_EQ(s.href, "#" + chart_anchor(b.chart));
    EXPECT_EQ(s.uncertain, b.uncertain);
    EXPECT_EQ(s.dashed, b.uncertain);
    EXPECT_GT(s.w, 0);
    EXPECT_GT(s.h, 0);
    ASSERT_EQ(s.finding_links.size(), b.fields.size());
    for (size_t i = 0; i < b.fields.size(); ++i)
      EXPECT_EQ(s.finding_links[i], "#" + finding_anchor(b.fields[i].finding_id));
    if (b.placement == Placement::kPerComputeUnit) lowest_per_unit = std::max(lowest_per_unit, s.y + s.h);
    if (b.placement == Placement::kShared) highest_shared = std::min(highest_shared, s.y);
  }
  EXPECT_LT(lowest_per_unit, highest_shared) << "a per-unit box drawn below a shared one";
  // The file beside report.md links into report.html.
  const std::string file = render_block_diagram_svg(d, "report.html");
  EXPECT_EQ(count_of(file, "href=\"report.html#"), count_of(svg, "href=\"#"));

  // The text form: every box, an uncertain title marked, within 100 columns.
  const std::string text = format_block_diagram_text(d);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  for (const auto& b : d.boxes)
    EXPECT_NE(text.find(b.title + (b.uncertain ? "?" : "")), std::string::npos) << b.title << "\n" << text;
}

// Hopper: L1 per SM and the L2 shared, both measured; the L2's far half read
// as a third level and drawn as the far half beside the near one; local
// memory on chip; the texture path shares the L1.
void expect_hopper(const Results& r) {
  const BlockDiagram d = block_diagram(r);
  expect_consistent(r, d);
  EXPECT_EQ(d.compute_units, 132u);
  for (const char* id : {"cu", "memory.L1", "memory.L2", "memory.L3", "local", "texture", "dram", "host"})
    EXPECT_NE(d.find(id), nullptr) << id;
  EXPECT_EQ(box(d, "memory.L1").placement, Placement::kPerComputeUnit);
  EXPECT_EQ(box(d, "memory.L1").placement_basis, "measured");
  EXPECT_EQ(box(d, "memory.L2").placement, Placement::kShared);
  EXPECT_EQ(box(d, "memory.L2").placement_basis, "measured");
  EXPECT_EQ(box(d, "memory.L3").far_half_of, "memory.L2");
  EXPECT_EQ(box(d, "memory.L3").placement, Placement::kShared);
  EXPECT_EQ(box(d, "memory.L2").title, "L2 near half");
  EXPECT_EQ(box(d, "memory.L3").title, "L2 far half");
  EXPECT_EQ(box(d, "local").placement, Placement::kPerComputeUnit);
  EXPECT_EQ(box(d, "texture").placement, Placement::kPerComputeUnit);
  EXPECT_EQ(field(box(d, "cu"), "exec.wave_width")->value, "32");
  EXPECT_EQ(box(d, "cu").fields.front().label, "FP32 lanes");
  EXPECT_NEAR(std::stod(box(d, "cu").fields.front().value), 128, 6);  // 4 x 32 per SM
  EXPECT_NE(field(box(d, "memory.L1"), "memory.line_bytes"), nullptr);
  EXPECT_NE(field(box(d, "host"), "host.zero_copy"), nullptr);

  // The halves side by side, level with each other.
  const auto drawn = svg_boxes(render_block_diagram_svg(d));
  const SvgBox& near = drawn.at("memory.L2");
  const SvgBox& far = drawn.at("memory.L3");
  EXPECT_EQ(near.y, far.y);
  EXPECT_GT(far.x, near.x + near.w);
}

TEST(BlockDiagram, H200Example) {
  const Results r = read_results_file(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/h200/results.json");
  expect_hopper(r);
  // Its L2's whole capacity (the far half's plateau) and the texture L1 are guesses.
  const BlockDiagram d = block_diagram(r);
  EXPECT_TRUE(box(d, "memory.L3").uncertain);
  EXPECT_TRUE(box(d, "texture").uncertain);
  EXPECT_FALSE(box(d, "memory.L1").uncertain);
  const auto drawn = svg_boxes(render_block_diagram_svg(d));
  EXPECT_TRUE(drawn.at("memory.L3").dashed);
  EXPECT_FALSE(drawn.at("memory.L1").dashed);
}

TEST(BlockDiagram, H100RecordedRuns) {
  for (const char* name : {"h100/full_run_first.json", "h100/full_run_second.json"}) {
    SCOPED_TRACE(name);
    expect_hopper(read_recorded(name));
  }
}

TEST(BlockDiagram, PoclCpuHasNoSharingMeasured) {
  const Results r = read_results_file(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/pocl/results.json");
  const BlockDiagram d = block_diagram(r);
  expect_consistent(r, d);
  // One compute unit per core, no sharing experiment: the levels are drawn
  // apart as not measured rather than guessed.
  EXPECT_EQ(box(d, "memory.L1").placement, Placement::kUnknown);
  EXPECT_NE(d.find("memory.L3"), nullptr);
}

TEST(BlockDiagram, SplitNeedsBothHalvesAndTheCriterion) {
  Results r;
  r.device.name = "Two levels";
  r.series.push_back({"latency.global", "latency", {"footprint", "B"}, {"latency", "ns"}, {}, {}});
  const auto add = [&](const std::string& id, double v, const std::string& unit) {
    r.findings.push_back(test::make_finding(id, v, unit, 0.9, {}, {}, {"latency.global"}, "", ""));
  };
  add("memory.L1.capacity_bytes", 4 << 20, "B");
  add("memory.L1.latency_ns", 100, "ns");
  add("memory.L2.capacity_bytes", 16 << 20, "B");  // 4x: a cache of its own
  add("memory.L2.latency_ns", 150, "ns");
  BlockDiagram d = block_diagram(r);
  EXPECT_EQ(box(d, "memory.L2").far_half_of, "");
  EXPECT_EQ(box(d, "memory.L2").title, "L2");
  r.findings[2].value = double(8 << 20);  // 2x and 1.5x slower: the far half
  d = block_diagram(r);
  EXPECT_EQ(box(d, "memory.L2").far_half_of, "memory.L1");
  EXPECT_EQ(box(d, "memory.L1").title, "L1 near half");
  EXPECT_EQ(box(d, "memory.L2").fields.front().label, "whole L1");
  // Nothing measured about sharing: neither half is placed.
  EXPECT_EQ(box(d, "memory.L2").placement, Placement::kUnknown);
  // A CPU's caches do not split: the same two levels stay two caches.
  r.device.type = "cpu";
  d = block_diagram(r);
  EXPECT_EQ(box(d, "memory.L2").far_half_of, "");
  EXPECT_EQ(box(d, "memory.L1").title, "L1");
  EXPECT_EQ(box(d, "memory.L2").title, "L2");
}

TEST(BlockDiagram, NoFindingsNoBoxes) {
  Results r;
  r.device.name = "Empty";
  EXPECT_TRUE(block_diagram(r).boxes.empty());
  EXPECT_EQ(format_block_diagram_text(block_diagram(r)), "");
}

// A run of each preset, as a user makes it: the diagram against the
// description, and the SVG written beside report.md.
class BlockDiagramSim : public testing::TestWithParam<std::string> {};

TEST_P(BlockDiagramSim, MatchesTheDescription) {
  const sim::SimConfig c = sim::load_sim_preset(GetParam());
  const fs::path dir = test::fresh_temp_dir("diagram_" + GetParam());
  // --no-replay: the diagram is the subject here; the loop is tested in closed_loop_test.cpp.
  const auto run = test::run_gpuscope("run --device sim:" + GetParam() + " --no-replay --out " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Results r = read_results_file((dir / "results.json").string());
  const BlockDiagram d = block_diagram(r);
  expect_consistent(r, d);
  EXPECT_EQ(d.compute_units, c.core.shader_cores);
  EXPECT_EQ(field(box(d, "cu"), "exec.wave_width")->value, std::to_string(c.core.wave_width));
  const DiagramField& lanes = box(d, "cu").fields.front();
  EXPECT_EQ(lanes.label, "FP32 lanes");
  EXPECT_NEAR(std::stod(lanes.value), c.core.units_per_core * c.core.lanes_per_unit,
              0.1 * c.core.units_per_core * c.core.lanes_per_unit);

  // Every level buffer loads pass through, in order, placed as described
  // wherever the run could tell: measured where the geometry probe's sharing
  // experiment reached the level (its wall-time budget decides how far, so a
  // loaded machine may leave a level unplaced), else following from a shared
  // level inside it.
  const auto levels = c.path_levels(sim::CachePath::load_store);
  for (size_t k = 0; k < levels.size(); ++k) {
    const std::string id = "memory.L" + std::to_string(k + 1);
    SCOPED_TRACE(id + " (" + levels[k]->name + ")");
    ASSERT_NE(d.find(id), nullptr);
    const DiagramBox& b = box(d, id);
    EXPECT_EQ(b.placement_basis == "measured", r.find_finding(id + ".shared_by_cus") != nullptr);
    if (b.placement != Placement::kUnknown)
      EXPECT_EQ(b.placement, levels[k]->per_core ? Placement::kPerComputeUnit : Placement::kShared);
  }
  EXPECT_EQ(d.find("memory.L" + std::to_string(levels.size() + 1)), nullptr)
      << "a level the device does not have";

  EXPECT_EQ(box(d, "local").placement, c.local.on_chip ? Placement::kPerComputeUnit : Placement::kShared);
  EXPECT_EQ(field(box(d, "local"), "local.on_chip")->value, c.local.on_chip ? "yes" : "no");
  EXPECT_NE(d.find("texture"), nullptr);
  EXPECT_NE(d.find("dram"), nullptr);
  EXPECT_EQ(field(box(d, "host"), "host.zero_copy")->value, c.host.zero_copy ? "yes" : "no");

  // diagram.svg beside report.md, linked from it, linking into report.html.
  std::ifstream svg_file(dir / kDiagramFileName), md_file(dir / "report.md");
  ASSERT_TRUE(svg_file && md_file);
  const std::string svg((std::istreambuf_iterator<char>(svg_file)), {});
  const std::string md((std::istreambuf_iterator<char>(md_file)), {});
  EXPECT_EQ(svg, render_block_diagram_svg(d, "report.html"));
  EXPECT_NE(md.find(std::string("](") + kDiagramFileName + ")"), std::string::npos);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Presets, BlockDiagramSim,
                         testing::Values("mali-g52", "adreno-530", "adreno-615", "adreno-320", "adreno-420"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace gpuscope
