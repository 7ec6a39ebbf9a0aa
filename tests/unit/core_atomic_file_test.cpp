// core/atomic_file: a write that fails leaves the previous file, no
// temporary file, and says why.
#include "core/atomic_file.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, FullDiskLeavesNoTemporaryFileAndSaysWhy) {
  const fs::path dir = test::fresh_temp_dir("atomic_file");
  const std::string path = (dir / "report.html").string();
  write_file_atomic("old", path);

  // A file size limit makes write() fail part-way (EFBIG) like a full disk.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_file_atomic(std::string(5000, 'x'), path);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);

  EXPECT_NE(message.find("cannot write"), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"report.html"});
  std::stringstream content;
  content << std::ifstream(path).rdbuf();
  EXPECT_EQ(content.str(), "old");
}

}  // namespace
}  // namespace gpuscope
