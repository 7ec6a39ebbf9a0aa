// The reports' graphics section (report/graphics_section.hpp,
// report/raster_picture.hpp) on a made-up run (support/graphics_results.hpp):
// the raster picture has the framebuffer's size and each pixel the colour of
// its ticket, the tile grid lies on the tile boundaries, the PNG in the page
// decodes to that picture, the knee and the fill-rate bars say what the
// findings say, the text reports carry the graphics block, and a run without
// graphics data gets none of it.
#include "report/graphics_section.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <string>

#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/raster_picture.hpp"
#include "report/terminal_summary.hpp"
#include "support/findings.hpp"
#include "support/graphics_results.hpp"
#include "support/png_reader.hpp"

namespace gpuscope {
namespace {

using test::graphics_results;
using test::GraphicsRunShape;

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The src of every <img class="gpuscope-picture ..."> in the page, decoded.
std::vector<test::DecodedPng> pictures_in(const std::string& html) {
  // Found by hand: std::regex recurses per character of a long match.
  std::vector<test::DecodedPng> out;
  for (size_t at = html.find("<img class=\"gpuscope-picture"); at != std::string::npos;
       at = html.find("<img class=\"gpuscope-picture", at + 1)) {
    const size_t src = html.find(" src=\"", at);
    if (src == std::string::npos || src > html.find('>', at)) {
      ADD_FAILURE() << "a picture without src";
      continue;
    }
    out.push_back(
        test::decode_png(test::png_from_data_uri(html.substr(src + 6, html.find('"', src + 6) - src - 6))));
  }
  return out;
}

// The tickets of rectangle 0's fragments, in order.
std::vector<uint32_t> first_rect_tickets(const test::TicketLog& log) {
  std::vector<uint32_t> out;
  for (size_t t = 0; t < log.rect.size(); ++t)
    if (log.rect[t] == 0) out.push_back(static_cast<uint32_t>(t));
  return out;
}

TEST(RasterPicture, EveryPixelHasItsFirstRectanglesTicket) {
  const GraphicsRunShape shape;
  const Results r = graphics_results(shape);
  const RasterPicture p = raster_picture(*r.find_series("graphics.raster.order"));
  ASSERT_TRUE(p.problem.empty()) << p.problem;
  EXPECT_EQ(p.width, 512u);
  EXPECT_EQ(p.height, 512u);
  EXPECT_EQ(p.stride, 1u);
  EXPECT_EQ(p.recorded, 512u * 512);
  EXPECT_EQ(p.tickets_taken, 512u * 512 * 2);
  EXPECT_EQ(p.ignored, 0u);
  const test::TicketLog log = test::tiled_raster_order(shape);
  const std::vector<uint32_t> first = first_rect_tickets(log);
  EXPECT_EQ(p.last_ticket, first.back());
  for (size_t k : {size_t{0}, size_t{1}, size_t{4095}, size_t{77777}, first.size() - 1})
    EXPECT_EQ(p.ticket[log.pixel[first[k]]], first[k]) << k;
  EXPECT_GT(p.ticket[511 + 511 * 512], 512u * 512 * 2 * 9 / 10) << "the last tile is shaded last";
}

TEST(RasterPicture, ColoursRunFromFirstToLastTicket) {
  const GraphicsRunShape shape;
  const Results r = graphics_results(shape);
  const RasterPicture p = raster_picture(*r.find_series("graphics.raster.order"));
  const IndexedImage img = ticket_image(p);
  ASSERT_EQ(img.index.size(), size_t{512} * 512);
  const test::TicketLog log = test::tiled_raster_order(shape);
  const std::vector<uint32_t> first = first_rect_tickets(log);
  EXPECT_EQ(img.index[log.pixel[0]], 0) << "the first ticket: the ramp's start";
  EXPECT_EQ(img.index[log.pixel[first.back()]], kRampColours - 1) << "the last recorded: the ramp's end";
  EXPECT_EQ(img.palette[0], ramp_colour(0));
  EXPECT_EQ(img.palette[kRampColours - 1], ramp_colour(1));
  EXPECT_NE(img.palette[kGreyIndex], ramp_colour(0.5));
  // The ramp is perceptual: it brightens from end to end.
  const auto luma = [](Rgb c) { return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
  for (int i = 1; i <= 16; ++i)
    EXPECT_GT(luma(ramp_colour(i / 16.0)), luma(ramp_colour((i - 1) / 16.0))) << i;

  // The first 4096 tickets: one tile's worth, the first rectangle's over
  // the four tiles the threads took; every other pixel grey.
  const IndexedImage few = ticket_image(p, 4096);
  EXPECT_EQ(few.index[log.pixel[4095]], kRampColours - 1);
  EXPECT_EQ(few.index[log.pixel[4096]], kGreyIndex);
  size_t coloured = 0;
  for (uint8_t i : few.index) coloured += i != kGreyIndex;
  EXPECT_EQ(coloured, 4096u);
}

TEST(RasterPicture, BadTracesAreDescribedNotDrawn) {
  Series s;
  s.id = "graphics.raster.order";
  s.points = {{0, 5, {}}, {1, 4294967295.0, {}}, {2, 1e10, {}}, {3, -1, {}}, {4, 6.5, {}}, {5, 7, {}}, {9, 8, {}}};
  EXPECT_FALSE(raster_picture(s).problem.empty()) << "no shape";
  s.meta = {{"width", 4}, {"height", 4}, {"stride", 2}, {"cells_x", 2}, {"cells_y", 2}, {"rects", 2}};
  const RasterPicture p = raster_picture(s);
  EXPECT_TRUE(p.problem.empty()) << p.problem;
  EXPECT_EQ(p.recorded, 1u) << "cell 0 of rectangle 0 (cell 1 holds no ticket)";
  EXPECT_EQ(p.ignored, 2u) << "a ticket past 32 bits and a negative one";
  s.meta["cells_x"] = 100000;
  s.meta["cells_y"] = 100000;
  EXPECT_NE(raster_picture(s).problem.find("larger"), std::string::npos);
  s.meta["cells_x"] = 1e14;
  s.meta["cells_y"] = 1e14;  // their product overflows 64 bits
  EXPECT_NE(raster_picture(s).problem.find("larger"), std::string::npos);
  s.meta["cells_x"] = 2;
  s.meta["cells_y"] = 2;
  s.points = {{4, 5, {}}};
  EXPECT_FALSE(raster_picture(s).problem.empty()) << "no record of rectangle 0";
}

TEST(RasterPicture, TileGridLiesOnTileBoundaries) {
  const TileGrid g = tile_grid(512, 512, 64, 64);
  EXPECT_EQ(g.xs, (std::vector<uint32_t>{64, 128, 192, 256, 320, 384, 448}));
  EXPECT_EQ(g.ys, g.xs);
  const TileGrid odd = tile_grid(200, 100, 64, 32);
  EXPECT_EQ(odd.xs, (std::vector<uint32_t>{64, 128, 192}));
  EXPECT_EQ(odd.ys, (std::vector<uint32_t>{32, 64, 96}));
  EXPECT_TRUE(tile_grid(512, 512, 0, 64).xs.empty());
  EXPECT_TRUE(tile_grid(512, 512, 63.5, 64).xs.empty());
  EXPECT_TRUE(tile_grid(4096, 4096, 1, 1).xs.empty()) << "4095 lines a side: too fine to draw";
}

TEST(RasterPicture, FirstNStepsAreTilesWorth) {
  const Results r = graphics_results();
  const RasterPicture p = raster_picture(*r.find_series("graphics.raster.order"));
  EXPECT_EQ(first_n_steps(p, 4096), (std::vector<uint64_t>{4096, 16384, 65536}));
  EXPECT_EQ(first_n_steps(p, 0), (std::vector<uint64_t>{4096, 16384, 65536})) << "1/64, 1/16, 1/4 of 512x512";
  EXPECT_EQ(first_n_steps(p, 262144), (std::vector<uint64_t>{262144}))
      << "only counts up to the last ticket recorded, about 524288";
}

TEST(BinningPicture, RectanglesRecurAlongTheStrip) {
  const Results r = graphics_results();
  const BinningPicture b = binning_picture(*r.find_series("graphics.raster.order"));
  ASSERT_TRUE(b.problem.empty()) << b.problem;
  EXPECT_EQ(b.rects, 2u);
  EXPECT_EQ(b.image.height, 2u);
  EXPECT_EQ(b.image.width, 512u);
  EXPECT_EQ(b.tickets_per_column, 1024u);  // 524288 tickets over at most 512 columns
  // Four threads shade their tiles' rectangle 0 (4 x 4096 tickets), then
  // their rectangle 1: column c (tickets 1024c ..) belongs to (c / 16) % 2.
  for (uint32_t c : {0u, 8u, 17u, 40u, 511u}) {
    const uint32_t owner = (c / 16) % 2;
    for (uint32_t row = 0; row < 2; ++row)
      EXPECT_EQ(b.image.index[row * 512 + c], row == owner ? 255 : 0) << "column " << c << " row " << row;
  }
}

TEST(GraphicsSection, PageHoldsThePictureWithItsGrid) {
  const Results r = graphics_results();
  const std::string html = render_html_report({{"gpu", &r, false}});
  ASSERT_NE(html.find("<h2 id=\"graphics\">"), std::string::npos);
  EXPECT_NE(html.find("href=\"#graphics\""), std::string::npos) << "the page's links name the section";
  EXPECT_LT(html.find("id=\"findings\""), html.find("id=\"graphics\""));
  EXPECT_LT(html.find("id=\"graphics\""), html.find("id=\"charts\""));

  const auto pictures = pictures_in(html);
  ASSERT_EQ(pictures.size(), 5u) << "the whole order, three first-N views and the binning strip";
  const test::DecodedPng& whole = pictures[0];
  EXPECT_EQ(whole.width, 512u);
  EXPECT_EQ(whole.height, 512u);
  const IndexedImage expected = ticket_image(raster_picture(*r.find_series("graphics.raster.order")));
  EXPECT_EQ(whole.index, expected.index);
  EXPECT_EQ(whole.palette, expected.palette);
  EXPECT_EQ(pictures[1].width, 512u);
  EXPECT_EQ(pictures[4].height, 2u) << "the binning strip: a row per rectangle";

  // The grid: seven lines each way at multiples of 64, none on the border.
  const size_t figure = html.find("<figure id=\"chart-graphics.raster.order\"");
  ASSERT_NE(figure, std::string::npos) << "the evidence links' anchor";
  const size_t path_at = html.find("class=\"tile-grid\" d=\"", figure);
  ASSERT_NE(path_at, std::string::npos);
  const std::string path = html.substr(path_at, html.find('"', path_at + 21) - path_at);
  for (int k = 1; k <= 7; ++k) {
    EXPECT_NE(path.find("M" + std::to_string(64 * k) + " 0V512"), std::string::npos) << k;
    EXPECT_NE(path.find("M0 " + std::to_string(64 * k) + "H512"), std::string::npos) << k;
  }
  EXPECT_EQ(count_of(path, "M"), 14u);

  // The evidence links land on the picture, and the trace is not chart data.
  EXPECT_NE(html.find("href=\"#chart-graphics.raster.order\""), std::string::npos);
  const size_t data = html.find("id=\"gpuscope-data\"");
  ASSERT_NE(data, std::string::npos);
  const std::string chart_json = html.substr(data, html.find("</script>", data) - data);
  EXPECT_EQ(chart_json.find("graphics.raster.order"), std::string::npos);
  EXPECT_NE(chart_json.find("graphics.tile_memory"), std::string::npos) << "report.js draws the knee chart";
  // 524288 records, yet the graphics section stays small.
  const size_t section = html.find("<h2 id=\"graphics\">");
  EXPECT_LT(html.find("<h2 id=\"charts\"") - section, 80000u);
  // The tile-memory chart stands in the graphics section, not among the charts.
  EXPECT_EQ(count_of(html, "id=\"canvas-chart-graphics.tile_memory\""), 1u);
  EXPECT_LT(html.find("id=\"canvas-chart-graphics.tile_memory\""), html.find("<h2 id=\"charts\""));
}

TEST(GraphicsSection, KneeMarksTheTileMemory) {
  const Results r = graphics_results();
  const nlohmann::json o = tile_memory_overlays(*r.find_series("graphics.tile_memory"), 0, r);
  ASSERT_EQ(o["markers"].size(), 1u);
  const auto& knee = o["markers"][0];
  EXPECT_EQ(knee["axis"], "x");
  EXPECT_DOUBLE_EQ(knee["value"].get<double>(), 16.0) << "64 KiB over the 4096-pixel tile";
  EXPECT_DOUBLE_EQ(knee["low"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(knee["high"].get<double>(), 17.0);
  EXPECT_EQ(knee["finding"], "graphics.tile.memory_bytes");
  ASSERT_EQ(o["guides"].size(), 1u);
  for (const auto& p : o["guides"][0]["points"]) {
    EXPECT_NEAR(p[0].get<double>() * p[1].get<double>(), 65536.0, 1e-6)
        << "tile pixels = memory / bytes per pixel";
    EXPECT_LE(p[1].get<double>(), 1.5 * 4096 + 1e-6) << "the curve stays near the measured tiles";
  }
  Results none = r;
  std::erase_if(none.findings, [](const Finding& f) { return f.id == "graphics.tile.memory_bytes"; });
  const nlohmann::json empty = tile_memory_overlays(*none.find_series("graphics.tile_memory"), 0, none);
  EXPECT_TRUE(empty["markers"].empty());
  EXPECT_TRUE(empty["guides"].empty());
}

TEST(GraphicsSection, FillRateBarsFollowTheFindings) {
  const Results r = graphics_results();
  const std::string html = render_html_report({{"gpu", &r, false}});
  // Every rate links to its finding; bar lengths are in the values' ratio.
  std::map<std::string, double> width;
  const std::regex bar(
      R"re(<a href="#finding-([^"]+)"><title>[^<]*</title>(?:<text[^>]*>[^<]*</text>)?<rect x="[^"]+" y="[^"]+" width="([0-9.]+)")re");
  for (std::sregex_iterator it(html.begin(), html.end(), bar), end; it != end; ++it)
    width[(*it)[1].str()] = std::stod((*it)[2].str());
  ASSERT_EQ(width.size(), 5u);
  EXPECT_NEAR(width["graphics.rop.rgba8.blend.gpixels"] / width["graphics.rop.rgba8.gpixels"], 0.5, 0.01);
  EXPECT_NEAR(width["graphics.texture.trilinear.gtexels"] / width["graphics.texture.bilinear.gtexels"], 0.5,
              0.01);
  EXPECT_NE(html.find(">rgba8 + blend</text>"), std::string::npos);
  // The guess (rgba16f at 0.40) is marked and pale.
  EXPECT_NE(html.find("6 Gpixel/s <tspan class=\"low\">?</tspan>"), std::string::npos);
  EXPECT_NE(html.find("fill-opacity=\"0.58\""), std::string::npos) << "0.3 + 0.7 * 0.4";
  // Compression: the found block's row highlighted; transaction elimination labelled experimental.
  EXPECT_NE(html.find("<tr class=\"found\"><td class=\"num\">16</td>"), std::string::npos);
  EXPECT_NE(html.find("Transaction elimination <span class=\"dim\">(experimental)"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1.8x</td>"), std::string::npos) << "changed over identical";
}

TEST(GraphicsSection, SpecSheetAndMarkdownCarryTheBlock) {
  const Results r = graphics_results();
  const auto lines = graphics_summary(r);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].label, "tile");
  EXPECT_EQ(lines[0].text, "64 x 64 px, bins primitives");
  EXPECT_EQ(lines[1].text, "64 KiB [60 KiB .. 68 KiB]");
  EXPECT_EQ(lines[2].text, "rgba8 12 Gpixel/s, rgba8 + blend 6 Gpixel/s, rgba16f 6 Gpixel/s ?");
  EXPECT_TRUE(lines[2].low_confidence);
  EXPECT_DOUBLE_EQ(lines[2].confidence, 0.4);
  EXPECT_EQ(lines[3].text, "bilinear 40 Gtexel/s, trilinear 20 Gtexel/s");

  const std::string text = format_summary(r, {false});
  EXPECT_NE(text.find("64 x 64 px, bins primitives"), std::string::npos) << text;
  EXPECT_NE(text.find("rgba8 + blend 6 Gpixel/s"), std::string::npos) << text;
  // The block stands for its findings: their lines are not printed again.
  EXPECT_EQ(text.find(describe_finding("graphics.tile.width_px").name + " "), std::string::npos) << text;
  EXPECT_EQ(text.find(describe_finding("graphics.rop.rgba8.gpixels").name + " "), std::string::npos) << text;
  EXPECT_NE(text.find(describe_finding("graphics.fb_compression.block_px").name), std::string::npos) << text;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
  }

  const std::string md = format_markdown({{"gpu", &r, false}});
  EXPECT_NE(md.find("- tile: 64 x 64 px, bins primitives (confidence 0.80)"), std::string::npos) << md;
  EXPECT_NE(md.find("- ROP fill: rgba8 12 Gpixel/s"), std::string::npos) << md;
  EXPECT_EQ(count_of(md, "- tile:"), 1u);
}

// A tile size of 1e308 px from a results file is written 1e+308, not as
// 309 digits, in the block and in the page's caption and tables.
TEST(GraphicsSection, HugeSizesAreNotWrittenDigitByDigit) {
  Results r = graphics_results();
  for (auto& f : r.findings)
    if (f.id == "graphics.tile.width_px") f.value = 1e308;
  for (auto& s : r.series)
    if (s.id == "graphics.fb_compression.rendered") s.points.back().x = 1e300;
  EXPECT_EQ(graphics_summary(r)[0].text, "1e+308 x 64 px, bins primitives");
  const std::string page = graphics_section_html({{"gpu", &r, false}}).str();
  EXPECT_EQ(page.find("1000000000000000"), std::string::npos);
  EXPECT_NE(page.find("1e+300"), std::string::npos);
}

TEST(GraphicsSection, NothingWithoutGraphicsData) {
  Results r = graphics_results();
  std::erase_if(r.series, [](const Series& s) { return s.id.starts_with("graphics."); });
  std::erase_if(r.findings, [](const Finding& f) { return f.id.starts_with("graphics."); });
  r.findings.push_back(test::make_finding("memory.L1.latency_ns", 20.0, "ns", 0.9));
  EXPECT_EQ(graphics_section_html({{"gpu", &r, false}}).str(), "");
  EXPECT_TRUE(graphics_summary(r).empty());
  const std::string html = render_html_report({{"gpu", &r, false}});
  EXPECT_EQ(html.find("id=\"graphics\""), std::string::npos);
  EXPECT_EQ(html.find("gpuscope-picture\""), std::string::npos);
  EXPECT_EQ(html.find("data:image/png"), std::string::npos);
  EXPECT_EQ(format_summary(r, {false}).find("tile"), std::string::npos);
  EXPECT_EQ(format_markdown({{"gpu", &r, false}}).find("Graphics"), std::string::npos);
}

TEST(GraphicsSection, BadTraceKeepsItsAnchorAndSaysWhy) {
  Results r = graphics_results({.width = 64, .height = 64, .tile = 16, .threads = 2});
  for (auto& s : r.series)
    if (s.id == "graphics.raster.order") s.meta.erase("stride");
  const std::string html = render_html_report({{"gpu", &r, false}});
  EXPECT_NE(html.find("<figure id=\"chart-graphics.raster.order\""), std::string::npos);
  EXPECT_NE(html.find("Not drawn: the series&#39; meta lacks the trace&#39;s width"), std::string::npos);
  EXPECT_EQ(pictures_in(html).size(), 0u) << "neither the order nor the binning strip";
}

// 4 x 8 px blocks (the H100's) on a 512 px picture: grid lines 4 screen
// pixels apart would hide the picture, so none are drawn, and the caption
// says why.
TEST(GraphicsSection, GridTooFineToSeeIsNotDrawn) {
  Results r = graphics_results();
  for (auto& f : r.findings) {
    if (f.id == "graphics.tile.width_px") f.value = 4.0;
    if (f.id == "graphics.tile.height_px") f.value = 8.0;
  }
  const std::string html = render_html_report({{"gpu", &r, false}});
  EXPECT_EQ(html.find("class=\"tile-grid\""), std::string::npos);
  EXPECT_NE(html.find("(too fine to draw at this size)"), std::string::npos);
}

TEST(GraphicsSection, ComparedRunsEachGetTheirPicture) {
  const Results a = graphics_results();
  const Results b =
      graphics_results({.width = 256, .height = 128, .tile = 32, .threads = 2});
  const std::string html = render_html_report({{"A", &a, false}, {"B", &b, false}});
  const auto pictures = pictures_in(html);
  ASSERT_GE(pictures.size(), 2u);
  bool found_b = false;
  for (const auto& p : pictures) found_b = found_b || (p.width == 256 && p.height == 128);
  EXPECT_TRUE(found_b) << "run B's 256x128 framebuffer";
  EXPECT_NE(html.find("M32 0V128"), std::string::npos) << "B's own 32 px grid";
  EXPECT_EQ(count_of(html, "<figure id=\"chart-graphics.raster.order\""), 1u);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// Whatever a results file holds (analysis sets bad series aside, but
// `report` shows stored findings as they are), the graphics section draws
// what it can and throws nothing.
TEST(GraphicsSection, HostileValuesNeitherThrowNorDrawNonsense) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Results r = test::graphics_results({.width = 32, .height = 32, .tile = 8, .threads = 2});
  for (auto& s : r.series) {
    s.points.push_back({nan, nan, {nan}});
    s.points.push_back({1e300, -1e300, {}});
    if (s.id == "graphics.raster.order") s.meta["rects"] = 1e14;
    if (s.id == "graphics.tile_memory") s.meta = {{"width", "wide"}};
  }
  for (auto& f : r.findings) {
    if (f.id == "graphics.tile.width_px") f.value = nan;
    if (f.id == "graphics.tile.height_px") f.value = inf;
    if (f.id == "graphics.tile.memory_bytes") f.value = -5.0;
    if (f.id == "graphics.rop.rgba8.gpixels") f.confidence = nan;
    if (f.id == "graphics.rop.rgba8.blend.gpixels") f.value = nan;
    if (f.id == "graphics.rop.rgba16f.gpixels") f.high = inf;
    if (f.id == "graphics.binning") f.value = std::vector<double>{1, 2};
  }
  r.findings.push_back(test::make_finding("graphics.texture..gtexels", true, "", 0.5));
  r.findings.push_back(test::make_finding("graphics.rop.x.gpixels", std::vector<double>{}, "", 0.5));
  std::string html;
  ASSERT_NO_THROW(html = render_html_report({{"gpu", &r, false}, {"again", &r, false}}));
  EXPECT_EQ(html.find("width=\"nan\""), std::string::npos);
  EXPECT_EQ(html.find("width=\"inf\""), std::string::npos);
  EXPECT_EQ(html.find("class=\"tile-grid\""), std::string::npos) << "no grid from a NaN by infinite tile";
  EXPECT_NO_THROW(format_summary(r, {false}));
  EXPECT_NO_THROW(format_markdown({{"gpu", &r, false}}));
  for (const auto& p : pictures_in(html)) EXPECT_GT(p.width, 0u);
}

}  // namespace
}  // namespace gpuscope
