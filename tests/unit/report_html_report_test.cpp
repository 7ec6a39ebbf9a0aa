// report/html_report: a chart draws a bounded number of points whatever the
// length of its series, and the peaks survive (issue 46: one
// 12-million-point series made a 289 MB page).
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gpuscope {
namespace {

Series long_series(size_t n) {
  Series s;
  s.id = "x.long";
  s.x = {"index", ""};
  s.y = {"value", "ns"};
  s.points.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const double y = 100 + std::sin(static_cast<double>(i) / 1000);
    s.points.push_back({static_cast<double>(i), y, {y}});
  }
  return s;
}

TEST(HtmlReport, ShortSeriesAreDrawnWhole) {
  const Series s = long_series(kChartPointsDrawn);
  const auto drawn = drawn_points(s);
  ASSERT_EQ(drawn.size(), s.points.size());
  for (size_t k = 0; k < drawn.size(); ++k) EXPECT_EQ(drawn[k], k);
  EXPECT_EQ(points_caption(s), "4000 points");
}

TEST(HtmlReport, LongSeriesAreDecimatedKeepingPeaksAndDips) {
  Series s = long_series(1'000'003);
  s.points[500'123].y = 1e6;  // a one-point peak
  s.points[777'777].y = -1e6;  // a one-point dip
  s.points[10].y = std::nan("");
  const auto drawn = drawn_points(s);
  EXPECT_LE(drawn.size(), kChartPointsDrawn);
  EXPECT_GE(drawn.size(), kChartPointsDrawn / 2);
  EXPECT_TRUE(std::is_sorted(drawn.begin(), drawn.end()));
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), 500'123u), drawn.end()) << "the peak was dropped";
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), 777'777u), drawn.end()) << "the dip was dropped";
  EXPECT_EQ(std::find(drawn.begin(), drawn.end(), 10u), drawn.end()) << "a NaN drawn beside numbers";
  EXPECT_NE(points_caption(s).find("1000003 points"), std::string::npos);
}

TEST(HtmlReport, APageOfALongSeriesIsBounded) {
  Results r;
  r.device.id = "sim:x";
  r.series.push_back(long_series(2'000'000));
  const std::string page = render_html_report({{"x", &r, false}});
  // Chart.js alone is about 200 KB; 4,000 points are about 150 KB more.
  EXPECT_LT(page.size(), 2'000'000u);
}

}  // namespace
}  // namespace gpuscope
