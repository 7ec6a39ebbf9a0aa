// report/html_builder: text reaches markup escaped, whether it is a text node
// or an attribute value, and only literals and Markup pass through as they are.
#include "report/html_builder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace gpuscope {
namespace {

using html::Markup;

const std::string kHostile = "<img src=x onerror=\"alert(1)\">'&";
const std::string kEscaped = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;";

TEST(HtmlBuilder, TextIsEscaped) {
  EXPECT_EQ(html::text(kHostile).str(), kEscaped);
  EXPECT_EQ(html::text("plain text, 18.4 ns").str(), "plain text, 18.4 ns");
}

TEST(HtmlBuilder, FormatEscapesEveryStringAndPassesMarkup) {
  const Markup cell = html::format("<td title=\"{}\">{}</td>", kHostile, kHostile);
  EXPECT_EQ(cell.str(), "<td title=\"" + kEscaped + "\">" + kEscaped + "</td>");
  // A C string and a string_view are text too; numbers are written as fmt writes them.
  EXPECT_EQ(html::format("{}{}", kHostile.c_str(), std::string_view(kHostile)).str(), kEscaped + kEscaped);
  EXPECT_EQ(html::format("<td>{:.2f} {}</td>", 0.5, 3).str(), "<td>0.50 3</td>");
  // Markup built before is not escaped twice.
  EXPECT_EQ(html::format("<tr>{}</tr>", cell).str(), "<tr>" + cell.str() + "</tr>");
}

TEST(HtmlBuilder, LiteralsConcatenateWithMarkup) {
  Markup m = "<p>";
  m += html::text("a < b");
  m += "</p>";
  EXPECT_EQ(m.str(), "<p>a &lt; b</p>");
  EXPECT_EQ(("<b>" + html::text("&") + "</b>").str(), "<b>&amp;</b>");
  const std::vector<Markup> parts = {html::text("<1>"), "<i>2</i>"};
  EXPECT_EQ(html::join(parts, ", ").str(), "&lt;1&gt;, <i>2</i>");
}

// Data cannot become Markup without escaping: neither a std::string nor a
// C string that is not a literal converts.
static_assert(!std::is_convertible_v<std::string, Markup>);
static_assert(!std::is_convertible_v<const char*, Markup>);
static_assert(!std::is_constructible_v<Markup, std::string>);
static_assert(std::is_convertible_v<const char (&)[4], Markup>);

}  // namespace
}  // namespace gpuscope
