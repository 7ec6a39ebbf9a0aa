// The matrix numerics table of report.md and report.html
// (report/matrix_numerics_table.hpp):
// a row per shape with its throughput and each property, "?" under
// confidence 0.5, "-" where unfound, and what the sum's width means.
#include "report/matrix_numerics_table.hpp"

#include <gtest/gtest.h>

using namespace gpuscope;

namespace {

Finding finding(const std::string& id, FindingValue v, double confidence = 0.9,
                const std::string& note = "") {
  Finding f;
  f.id = id;
  f.value = std::move(v);
  f.confidence = confidence;
  f.note = note;
  return f;
}

}  // namespace

TEST(MatrixNumericsTable, OneRowPerShapeBesideItsThroughput) {
  Results r;
  EXPECT_EQ(matrix_numerics_markdown(r), "");
  const std::string fp8 = "compute.matrix.f8e4m3xf8e4m3->f32.16x16x32";
  r.findings = {
      finding(fp8 + ".throughput_gops", 1979000.0),
      finding(fp8 + ".numerics.matches_model", true),
      finding(fp8 + ".numerics.products", std::string("exact")),
      finding(fp8 + ".numerics.sum_bits", 14.0, 0.875,
              "the internal sum keeps 14 significand bits; pattern 3 (c = 16) gave 0x41800000 (16)"),
      finding(fp8 + ".numerics.sum_rounding", std::string("toward-zero"), 0.4),
      finding(fp8 + ".numerics.alignment", std::string("truncate")),
      finding(fp8 + ".numerics.block", 32.0),
      finding(fp8 + ".numerics.subnormal_inputs", true),
      finding(fp8 + ".numerics.subnormal_outputs", false),
      finding("compute.matrix.i8xi8->i32.16x16x32.numerics.matches_model", false, 0.95,
              "behaves like none of the 2 models: ..."),
  };
  const std::string md = matrix_numerics_markdown(r);
  EXPECT_NE(
      md.find("| f8e4m3xf8e4m3-&gt;f32.16x16x32 | 1979000 Gop/s | yes | exact | 14 bits, toward-zero ?, "
              "aligned truncate | 32 | - | kept / flushed | - |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| i8xi8-&gt;i32.16x16x32 | - | no |"), std::string::npos) << md;
  // The meaning of a narrow sum, without the quoted patterns; a unit that
  // matches no model says what it did.
  EXPECT_NE(md.find("- f8e4m3xf8e4m3-&gt;f32.16x16x32: the internal sum keeps 14 significand bits\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("behaves like none of the 2 models"), std::string::npos) << md;

  // report.html: the same cells, escaped, and the same lines under them.
  const std::string html = matrix_numerics_html(r).str();
  EXPECT_NE(html.find("<th>subnormals in / out</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>f8e4m3xf8e4m3-&gt;f32.16x16x32</td><td>1979000 Gop/s</td><td>yes</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<li>f8e4m3xf8e4m3-&gt;f32.16x16x32: the internal sum keeps 14 significand bits</li>"),
            std::string::npos)
      << html;
  EXPECT_TRUE(matrix_numerics_html(Results{}).empty());
}
