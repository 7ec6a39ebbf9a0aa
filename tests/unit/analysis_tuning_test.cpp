// The readers' tuning tables (src/analysis/*_tuning.hpp) and the map a
// newcomer reads (docs/inference.md) say the same: every threshold has a
// row `| `name` | value | unit | ...` there, with the code's value, and
// its fields say what it separates and what set it.
#include "analysis/tuning.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace gpuscope::analysis {
namespace {

std::string inference_doc() {
  std::ifstream in(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/inference.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TuningTables, EveryThresholdIsNamedOnceAndSaysWhatItSeparates) {
  std::set<std::string_view> names;
  for (const TuningTable& table : tuning_tables()) {
    EXPECT_FALSE(table.rows.empty()) << table.reader;
    for (const Threshold* t : table.rows) {
      SCOPED_TRACE(t->name);
      EXPECT_TRUE(names.insert(t->name).second) << "named twice";
      EXPECT_EQ(t->name.substr(0, 1), "k");
      EXPECT_FALSE(t->unit.empty());
      EXPECT_NE(t->separates.find(' '), std::string_view::npos);
      EXPECT_NE(t->evidence.find(' '), std::string_view::npos);
    }
  }
  EXPECT_GT(names.size(), 30u);
}

TEST(TuningTables, DocsListEveryThresholdWithItsValue) {
  const std::string doc = inference_doc();
  ASSERT_FALSE(doc.empty()) << "docs/inference.md not read";
  for (const TuningTable& table : tuning_tables())
    for (const Threshold* t : table.rows) {
      const std::string row = fmt::format("| `{}` | {:g} | {} |", t->name, t->value, t->unit);
      EXPECT_NE(doc.find(row), std::string::npos) << "docs/inference.md has no row starting " << row;
    }
}

}  // namespace
}  // namespace gpuscope::analysis
