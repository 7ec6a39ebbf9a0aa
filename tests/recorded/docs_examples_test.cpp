// docs/examples: the findings stored in each example's results.json are what
// a fresh `gpuscope analyze` of its own series gives, so that the examples
// show what this gpuscope concludes. After an analysis change, regenerate
// them (docs/README.md).
#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope {
namespace {

class ExampleFindings : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleFindings, MatchAFreshAnalysis) {
  const std::string path =
      std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/" + GetParam() + "/results.json";
  const Results stored = read_results_file(path);
  Results fresh = stored;
  fresh.findings = analysis::analyze_all(fresh);
  const nlohmann::json want = to_json(fresh)["findings"];
  const nlohmann::json have = to_json(stored)["findings"];
  ASSERT_EQ(have.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(have[i], want[i]) << "findings[" << i << "] of " << path;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleFindings, ::testing::Values("pocl", "h200"));

}  // namespace
}  // namespace gpuscope
