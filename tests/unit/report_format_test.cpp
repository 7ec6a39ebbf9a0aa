// report/format: every value a report prints has a bounded length, whatever
// a results file holds (issue 46: 400,000 values of 1e308 were printed as
// 309-digit integers, 124 MB).
#include "report/format.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "support/findings.hpp"

namespace gpuscope {
namespace {

using test::make_finding;

TEST(ReportFormat, HugeMagnitudesAreNotWrittenDigitByDigit) {
  EXPECT_EQ(format_significant(1e308), "1e+308");
  EXPECT_EQ(format_significant(-2.5e20), "-2.5e+20");
  EXPECT_EQ(format_value(make_finding("x.count", 1e308, "", 0.9)), "1e+308");
  EXPECT_EQ(format_value(make_finding("x.rate", 3e300, "MHz", 0.9)), "3e+300 MHz");
  EXPECT_LE(format_value(make_finding("x.size", 1e308, "B", 0.9)).size(), 16u);
  // What reads well whole stays whole.
  EXPECT_EQ(format_significant(123456789), "123456789");
  EXPECT_EQ(format_value(make_finding("x.clock", 1710.0, "MHz", 0.9)), "1710 MHz");
  EXPECT_EQ(format_value(make_finding("x.count", 4096.0, "", 0.9)), "4096");
  EXPECT_EQ(format_significant(std::numeric_limits<double>::infinity()), "inf");
}

TEST(ReportFormat, LongListsAreSummarised) {
  const Finding big = make_finding("x.list", std::vector<double>(400000, 1e308), "B", 0.9);
  const std::string s = format_value(big);
  EXPECT_LT(s.size(), 200u) << s;
  EXPECT_NE(s.find("400000 values"), std::string::npos) << s;
  std::vector<double> ramp;
  for (int i = 1; i <= 100; ++i) ramp.push_back(i);
  const std::string r = format_value(make_finding("x.sizes", ramp, "", 0.9));
  EXPECT_EQ(r, "1, 2, 3, 4, 5, 6, 7, 8, ... (100 values, 1 to 100)");
  // A short list is written whole.
  EXPECT_EQ(format_value(make_finding("x.widths", std::vector<double>{32, 64, 128}, "", 0.9)), "32, 64, 128");
}

}  // namespace
}  // namespace gpuscope
