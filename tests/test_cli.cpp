// The command line's contract (docs/results-format.md): exit codes and messages on bad
// input. These run the real binary; none needs more than a device list.
#include "cli_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpuscope::test {
namespace {

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpuscope_cli_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Cli, ListShowsPoclDevice) {
  const auto r = run_gpuscope("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("opencl:0:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu"), std::string::npos) << r.output;
}

TEST(Cli, UnknownDeviceListsValidOnesAndExits2) {
  const auto r = run_gpuscope("run --device opencl:9:9 --out " + temp_dir("dev").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown device 'opencl:9:9'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("opencl:0:0"), std::string::npos) << r.output;
  const auto s = run_gpuscope("run --device banana");
  EXPECT_EQ(s.exit_code, 2) << s.output;
}

TEST(Cli, UnknownProbeNamesValidOnesAndExits2) {
  const auto r = run_gpuscope("run --probes latency,nosuchprobe");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown probe 'nosuchprobe'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("latency"), std::string::npos) << r.output;
}

TEST(Cli, BadUsageExits2) {
  EXPECT_EQ(run_gpuscope("").exit_code, 2);
  EXPECT_EQ(run_gpuscope("frobnicate").exit_code, 2);
  EXPECT_EQ(run_gpuscope("run --max-launch-ms -5").exit_code, 2);
  EXPECT_EQ(run_gpuscope("analyze").exit_code, 2);
  const auto out = run_gpuscope("run --out /proc/gpuscope-cannot-write-here");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("output directory"), std::string::npos) << out.output;
  EXPECT_EQ(run_gpuscope("--help").exit_code, 0);
}

TEST(Cli, AnalyzeRejectsMissingTruncatedAndMalformedFiles) {
  const auto dir = temp_dir("analyze");
  const auto missing = run_gpuscope("analyze " + (dir / "nope.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("nope.json"), std::string::npos) << missing.output;

  const std::pair<const char*, const char*> bad[] = {
      {"empty.json", ""},
      {"truncated.json", R"({"schema": "gpuscope.results/1", "series": [{"id": "lat)"},
      {"garbage.json", "\x01\x02 not json at all"},
      {"array.json", "[1, 2, 3]"},
      {"schema.json", R"({"schema": "something.else/9"})"},
  };
  for (const auto& [name, text] : bad) {
    std::ofstream(dir / name) << text;
    const auto r = run_gpuscope("analyze " + (dir / name).string());
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_NE(r.output.find("gpuscope:"), std::string::npos) << name << ": " << r.output;
  }
}

}  // namespace
}  // namespace gpuscope::test
