// core/atomic_file: a write that fails leaves the previous file, no
// temporary file, and says why.
#include "core/atomic_file.hpp"

#include "core/error.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

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

std::string refusal(const std::string& path) {
  try {
    write_file_atomic("text", path);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

bool is_character_device(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

// The rename would put a regular file where the device node was (as root,
// /dev/null itself); only a regular file is replaced.
TEST(AtomicFile, DevicesDirectoriesAndFifosAreRefusedNotReplaced) {
  ASSERT_TRUE(is_character_device("/dev/null"));
  const std::string dev = refusal("/dev/null");
  EXPECT_NE(dev.find("'/dev/null': it is a character device, and only a regular file is replaced"),
            std::string::npos)
      << dev;
  EXPECT_TRUE(is_character_device("/dev/null"));

  const fs::path dir = test::fresh_temp_dir("atomic_file_kinds");
  fs::create_directory(dir / "sub");
  EXPECT_NE(refusal((dir / "sub").string()).find("it is a directory"), std::string::npos);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_NE(refusal((dir / "fifo").string()).find("it is a FIFO"), std::string::npos);
  EXPECT_THROW(check_output_file("/dev/null"), OutputError);
  EXPECT_NO_THROW(check_output_file((dir / "not-yet.html").string()));
}

TEST(AtomicFile, LinkToAFileStaysALinkAndLoopsAreRefused) {
  const fs::path dir = test::fresh_temp_dir("atomic_file_links");
  write_file_atomic("old", (dir / "target.json").string());
  fs::create_symlink("target.json", dir / "link.json");
  write_file_atomic("new", (dir / "link.json").string());
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  std::stringstream content;
  content << std::ifstream(dir / "target.json").rdbuf();
  EXPECT_EQ(content.str(), "new");

  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  EXPECT_NE(refusal((dir / "loop_a").string()).find("a symbolic link that"), std::string::npos);
  fs::create_symlink("nowhere", dir / "dangling");
  EXPECT_NE(refusal((dir / "dangling").string()).find("a symbolic link that leads to no file"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
}

}  // namespace
}  // namespace gpuscope
