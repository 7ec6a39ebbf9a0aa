// core/json_input: what is read from outside is bounded, and each way it can
// be wrong gets a message that says which.
#include "core/json_input.hpp"

#include "core/error.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

std::string rejection(const std::string& text, size_t max_depth = 32) {
  try {
    parse_json_input(text, max_depth);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string read_rejection(const std::string& path, size_t max_bytes = 1 << 20) {
  try {
    read_input_file(path, "input", max_bytes);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, FifoWithoutWriterIsRefusedAtOnce) {
  const std::string fifo = (test::fresh_temp_dir("json_input") / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = read_rejection(fifo);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(msg.find("is a FIFO; it must be a regular file"), std::string::npos) << msg;
}

TEST(JsonInput, DevicesAndDirectoriesAreRefused) {
  for (const char* dev : {"/dev/zero", "/dev/urandom", "/dev/null"})
    EXPECT_NE(read_rejection(dev).find("is a device"), std::string::npos) << dev;
  EXPECT_NE(read_rejection(test::fresh_temp_dir("json_input").string()).find("is a directory"), std::string::npos);
}

TEST(JsonInput, FileLargerThanTheLimitIsRefused) {
  const fs::path path = test::fresh_temp_dir("json_input") / "big.json";
  std::ofstream(path) << std::string(3 << 20, ' ');
  EXPECT_NE(read_rejection(path.string(), 2 << 20).find("larger than the 2 MiB limit"), std::string::npos);
  EXPECT_EQ(read_input_file(path.string(), "input", 3 << 20).size(), size_t{3} << 20);
}

TEST(JsonInput, OverlongFileNameIsAUsageError) {
  const std::string msg = read_rejection(std::string(5000, 'a'));
  EXPECT_NE(msg.find("File name too long"), std::string::npos) << msg;
}

TEST(JsonInput, NestingPastTheLimitIsRefusedWhereItHappens) {
  // 100,000 levels inside a free-form object: refused before anything that
  // recurses per level (nlohmann's writer, copy, destructor) sees them.
  const std::string deep =
      R"({"device": {"vendor_info": {"a": )" + std::string(100000, '[') + std::string(100000, ']') + "}}}";
  const std::string msg = rejection(deep);
  EXPECT_NE(msg.find("device.vendor_info.a[0]"), std::string::npos) << msg.substr(0, 200);
  EXPECT_NE(msg.find("nested deeper than 32 levels"), std::string::npos) << msg.substr(0, 200);
  EXPECT_EQ(rejection("[[[1]]]", 3), "");
  EXPECT_NE(rejection("[[[[1]]]]", 3).find("nested deeper than 3 levels"), std::string::npos);
}

TEST(JsonInput, OnlyInputThatEndsEarlySaysTruncated) {
  EXPECT_NE(rejection(R"({"series": [{"id": "a")").find("ends early"), std::string::npos);
  EXPECT_NE(rejection(R"({"series": [{"id": "a)").find("(truncated?)"), std::string::npos);
  const std::string syntax = rejection("{\"a\": 1,\n \"b\": x}");
  EXPECT_EQ(syntax.find("truncated"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("syntax error at line 2, column 7"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("in b"), std::string::npos) << syntax;
  const std::string trailing = rejection("{\"a\": 1}x");
  EXPECT_EQ(trailing.find("truncated"), std::string::npos) << trailing;
  EXPECT_NE(trailing.find("line 1, column 9"), std::string::npos) << trailing;
}

// nlohmann's reader stops at a NUL as if the text ended there.
TEST(JsonInput, NulByteIsNamedWithItsOffsetNotCalledTruncation) {
  const std::string text = std::string("{\"a\": 1,\n \"b\"") + '\0' + ": 2}";
  const std::string e = rejection(text);
  EXPECT_NE(e.find("a NUL byte at offset 13 (line 2, column 5)"), std::string::npos) << e;
  EXPECT_EQ(e.find("ends early"), std::string::npos) << e;
  EXPECT_NE(rejection(std::string("\"x") + '\0' + "\"").find("NUL byte at offset 2"), std::string::npos);
}

TEST(JsonInput, BadUtf8SaysSoWithItsPlace) {
  const std::string msg = rejection("{\"name\": \"caf\xe9\"}");
  EXPECT_NE(msg.find("byte 0xe9 at line 1, column 14 is not UTF-8"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_EQ(rejection("{\"name\": \"caf\xc3\xa9\"}"), "");
}

TEST(JsonInput, NumberTooLargeForADoubleNamesItsField) {
  const std::string msg = rejection(R"({"memory": {"caches": [{"capacity_bytes": 1e400}]}})");
  EXPECT_NE(msg.find("memory.caches[0].capacity_bytes: the number 1e400 is too large"), std::string::npos)
      << msg;
}

TEST(JsonInput, KeysThatAreNotPlainNamesAreQuotedInPaths) {
  EXPECT_EQ(json_key_path("", "memory"), "memory");
  EXPECT_EQ(json_key_path("memory", "dram_2"), "memory.dram_2");
  EXPECT_EQ(json_key_path("memory", ""), "memory[\"\"]");
  EXPECT_EQ(json_key_path("memory", "a.b"), "memory[\"a.b\"]");
  EXPECT_EQ(json_key_path("", "\x1b[2J"), "[\"\\\\x1b[2J\"]");
}

}  // namespace
}  // namespace gpuscope
