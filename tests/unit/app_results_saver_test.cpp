// app/results_saver: results.json after each probe, in line or beside the
// next probe, always holding the newest series with their findings.
#include "app/results_saver.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

class ResultsSaverTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpuscope_saver_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A recorded run whose series give findings; saved below as if its
    // series came one probe at a time.
    whole_ = read_recorded("h200/exec_quick.json");
    ASSERT_GE(whole_.series.size(), 2u);
    ASSERT_FALSE(analysis::analyze_all(whole_).empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `whole_` with its first n series, no findings.
  Results first_series(size_t n) const {
    Results r = whole_;
    r.series.resize(n);
    r.findings.clear();
    r.unfound.clear();
    return r;
  }

  fs::path dir_;
  Results whole_;
};

TEST_F(ResultsSaverTest, InLineSetsTheRunsOwnFindingsAndWrites) {
  const std::string path = (dir_ / "results.json").string();
  ResultsSaver saver(path, false);
  EXPECT_FALSE(saver.in_background());
  Results r = first_series(whole_.series.size());
  saver.save(r);
  EXPECT_FALSE(r.findings.empty()) << "in line, the run's own results get their findings";
  const Results written = read_results_file(path);
  EXPECT_EQ(written.series.size(), whole_.series.size());
  EXPECT_EQ(written.findings.size(), r.findings.size());
}

TEST_F(ResultsSaverTest, InTheBackgroundTheFileEndsWithTheNewestSeriesAndTheirFindings) {
  const std::string path = (dir_ / "results.json").string();
  ResultsSaver saver(path, true);
  EXPECT_TRUE(saver.in_background());
  for (size_t n = 1; n <= whole_.series.size(); ++n) {
    Results r = first_series(n);
    saver.save(r);
    EXPECT_TRUE(r.findings.empty()) << "in the background, the caller's results are left as they were";
  }
  saver.finish();
  const Results written = read_results_file(path);
  ASSERT_EQ(written.series.size(), whole_.series.size()) << "a later save was dropped or overtaken";
  EXPECT_EQ(written.findings.size(), analysis::analyze_all(whole_).size());
}

TEST_F(ResultsSaverTest, ABackgroundSaveThatFailsIsThrownByFinish) {
  // A folder that cannot be made: a file stands where it would be.
  const fs::path blocked = dir_ / "out";
  { std::ofstream(blocked) << "a file"; }
  const std::string path = (blocked / "results.json").string();
  ResultsSaver saver(path, true);
  Results r = first_series(1);
  saver.save(r);
  EXPECT_ANY_THROW(saver.finish());
  // Said once: the saver goes on with the next save.
  fs::remove(blocked);
  fs::create_directories(blocked);
  saver.save(r);
  EXPECT_NO_THROW(saver.finish());
  EXPECT_TRUE(fs::exists(path));
}

}  // namespace
}  // namespace gpuscope
