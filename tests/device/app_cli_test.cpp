// The command line's contract (docs/results-format.md): exit codes and messages on bad
// input. These run the real binary; none needs more than a device list.
#include "support/cli.hpp"

#include "support/temp_dir.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpuscope::test {
namespace {

TEST(Cli, ListShowsPoclDevice) {
  const auto r = run_gpuscope("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("opencl:0:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu"), std::string::npos) << r.output;
}

TEST(Cli, UnknownDeviceListsValidOnesAndExits2) {
  const auto r = run_gpuscope("run --device opencl:9:9 --out " + test::fresh_temp_dir("cli_dev").string());
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
  const auto dir = test::fresh_temp_dir("cli_analyze");
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

TEST(Cli, RunOptionMisuseExits2NamingTheRange) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --probes latency,latency", "--probes names 'latency' twice"},
      {"run --probes ,", "has an empty name"},
      {"run --probes ''", "--probes is empty"},
      {"run --device ''", "--device is empty"},
      {"run --max-launch-ms nan", "--max-launch-ms nan is outside [1, 10000] ms"},
      {"run --max-launch-ms inf", "is outside [1, 10000] ms"},
      {"run --budget-scale nan", "--budget-scale nan is outside [0.01, 100]"},
      {"run --budget-scale 0", "--budget-scale 0 is outside [0.01, 100]"},
      {"run --budget-scale 1e300", "is outside [0.01, 100]"},
      {"run --sustain-s 0", "--sustain-s 0 is outside [0.1, 3600] s"},
      {"run --sustain-s -5", "--sustain-s -5 is outside [0.1, 3600] s"},
      {"run --sustain-s 1e9", "is outside [0.1, 3600] s"},
      {"run --sustain-s nan", "is outside [0.1, 3600] s"},
  };
  for (const auto& [args, expect] : cases) {
    const auto r = run_gpuscope(std::string(args) + " --out " + test::fresh_temp_dir("cli_options").string());
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(expect), std::string::npos) << args << ": " << r.output;
  }
}

TEST(Cli, FifosDevicesAndOverlongNamesAreRefusedWithExit2) {
  const auto dir = test::fresh_temp_dir("cli_nonregular");
  const std::string fifo = (dir / "results.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& input : {fifo, std::string("/dev/zero"), std::string("/dev/urandom")})
    for (const char* command : {"analyze", "report", "compare"}) {
      const std::string args =
          std::string(command) + " " + input + (std::string(command) == "compare" ? " " + input : "");
      const auto r = run_gpuscope(args, "timeout 10");  // a hang fails with 124
      EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
      EXPECT_NE(r.output.find("must be a regular file"), std::string::npos) << args << ": " << r.output;
    }
  const auto reference = run_gpuscope(
      "analyze " + recorded_path("h100/divergence_triples_first.json") + " --compare " + fifo,
      "timeout 10");
  EXPECT_EQ(reference.exit_code, 2) << reference.output;
  EXPECT_NE(reference.output.find("reference profile"), std::string::npos) << reference.output;
  EXPECT_NE(reference.output.find("must be a regular file"), std::string::npos) << reference.output;
  const std::string longname = (dir / std::string(300, 'n')).string() + ".json";
  for (const std::string args :
       {"analyze " + longname, "report " + longname, "compare " + longname + " " + longname}) {
    const auto r = run_gpuscope(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("File name too long"), std::string::npos) << r.output;
  }
}

// A device name carrying terminal escapes and a NUL (a hostile results
// file, or a driver) reaches neither the terminal nor the reports raw.
TEST(Cli, ControlCharactersInDeviceStringsAreEscapedEverywhere) {
  const auto dir = test::fresh_temp_dir("cli_escapes");
  std::stringstream text;
  text << std::ifstream(recorded_path("h100/divergence_triples_first.json")).rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str());
  j["device"]["name"] = std::string("GPU\x1b]0;owned\x07\x1b[2J") + std::string(1, '\0') + "\xc2\x9b";
  j["series"][0]["meta"]["\x1b[31m"] = "\x1b[0m";
  const std::string results = (dir / "results.json").string();
  std::ofstream(results) << j.dump();
  const auto analyzed = run_gpuscope("analyze " + results + " --out " + (dir / "out").string());
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.output;
  const auto md = run_gpuscope("report " + results + " --format md --out -");
  ASSERT_EQ(md.exit_code, 0) << md.output;
  for (const std::string& out : {analyzed.output, md.output}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\0'), std::string::npos);
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos);
    EXPECT_NE(out.find("GPU\\x1b]0;owned\\x07"), std::string::npos) << out;
  }
  for (const char* name : {"report.html", "report.md", "results.json"}) {
    std::stringstream written;
    written << std::ifstream(dir / "out" / name).rdbuf();
    EXPECT_EQ(written.str().find('\x1b'), std::string::npos) << name;
    EXPECT_EQ(written.str().find('\0'), std::string::npos) << name;
    EXPECT_EQ(written.str().find("\xc2\x9b"), std::string::npos) << name;
  }
}

TEST(Cli, UnknownSubcommandIsNamedWithTheValidOnes) {
  const auto r = run_gpuscope("frobnicate --quick");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown subcommand 'frobnicate'; valid subcommands: list, run, analyze, report, compare"),
            std::string::npos)
      << r.output;
}

// CLI11 read an empty number as 0 (or took it), and echoed 1e309 as "inf".
TEST(Cli, NumbersAreRefusedAsTypedWithTheirRange) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --sustain-s ''", "--sustain-s is empty; give a number from 0.1 to 3600 s"},
      {"run --max-launch-ms ''", "--max-launch-ms is empty; give a number from 1 to 10000 ms"},
      {"run --budget-scale ''", "--budget-scale is empty; give a number from 0.01 to 100"},
      {"run --sustain-s 1e309", "--sustain-s 1e309 is outside [0.1, 3600] s"},
      {"run --max-launch-ms abc", "--max-launch-ms 'abc' is not a number; give a number from 1 to 10000 ms"},
  };
  for (const auto& [args, expect] : cases) {
    const auto r = run_gpuscope(std::string(args) + " --out " + test::fresh_temp_dir("cli_numbers").string());
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(expect), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("inf"), std::string::npos) << args << ": " << r.output;
  }
}

// Given but empty is refused, never read as "not given" (they exited 0
// doing nothing).
TEST(Cli, EmptyCompareAndOutAreRefused) {
  const auto dir = test::fresh_temp_dir("cli_empty");
  const std::string results = recorded_path("h100/divergence_triples_first.json");
  const std::pair<std::string, const char*> cases[] = {
      {"run --probes launch --compare '' --out " + dir.string(), "--compare is empty"},
      {"analyze " + results + " --compare ''", "--compare is empty"},
      {"analyze " + results + " --out ''", "analyze --out is empty"},
      {"report " + results + " --out ''", "report --out is empty"},
      {"compare " + results + " " + results + " --out ''", "compare --out is empty"},
  };
  for (const auto& [args, expect] : cases) {
    const auto r = run_gpuscope(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(expect), std::string::npos) << args << ": " << r.output;
  }
}

// They were "unknown reference".
TEST(Cli, CompareWithADeviceFileOrALinkLoopSaysWhatItIs) {
  const auto dir = test::fresh_temp_dir("cli_compare_kinds");
  std::filesystem::create_symlink("loop_b", dir / "loop_a");
  std::filesystem::create_symlink("loop_a", dir / "loop_b");
  const std::string results = recorded_path("h100/divergence_triples_first.json");
  const auto dev = run_gpuscope("analyze " + results + " --compare /dev/null");
  EXPECT_EQ(dev.exit_code, 2) << dev.output;
  EXPECT_NE(dev.output.find("reference profile '/dev/null' is a device; it must be a regular file"), std::string::npos)
      << dev.output;
  const auto loop = run_gpuscope("analyze " + results + " --compare " + (dir / "loop_a").string());
  EXPECT_EQ(loop.exit_code, 2) << loop.output;
  EXPECT_NE(loop.output.find("Too many levels of symbolic links"), std::string::npos) << loop.output;
  const auto compared = run_gpuscope("compare " + results + " " + (dir / "loop_a").string() + " --out " +
                                     (dir / "c.html").string());
  EXPECT_EQ(compared.exit_code, 2) << compared.output;
  EXPECT_EQ(compared.output.find("unknown reference"), std::string::npos) << compared.output;
}

bool is_character_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// As root, the rename over the target put a regular file in /dev/null's
// place. Only regular files are replaced; a device is refused (exit 2).
TEST(Cli, OutputsThatAreNotRegularFilesAreRefusedAndLeftAlone) {
  ASSERT_TRUE(is_character_device("/dev/null"));
  const auto dir = test::fresh_temp_dir("cli_outputs");
  const std::string results = recorded_path("h100/divergence_triples_first.json");
  for (const std::string& args :
       {"report " + results + " --out /dev/null", "compare " + results + " " + results + " --out /dev/null"}) {
    const auto r = run_gpuscope(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("'/dev/null': it is a character device, and only a regular file is replaced"),
              std::string::npos)
        << args << ": " << r.output;
    EXPECT_TRUE(is_character_device("/dev/null")) << args;
  }
  // run: refused before any device time.
  std::filesystem::create_symlink("/dev/null", dir / "results.json");
  const auto run = run_gpuscope("run --quiet --probes launch --device sim:mali-g52 --out " + dir.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("it is a character device"), std::string::npos) << run.output;
  EXPECT_TRUE(is_character_device("/dev/null"));
}

// `> /dev/full` was exit 0 with no message.
TEST(Cli, StandardOutputThatRefusesBytesIsExit2WithAMessage) {
  const auto dir = test::fresh_temp_dir("cli_full");
  const std::string results = recorded_path("h100/divergence_triples_first.json");
  for (const std::string& args :
       {std::string("list"), std::string("list --references"), "analyze " + results,
        "report " + results + " --out -", "compare " + results + " " + results + " --out " + (dir / "c.html").string(),
        "run --quiet --probes launch --device sim:mali-g52 --out " + dir.string(), std::string("--help")}) {
    const auto r = run_gpuscope(args, "", "/dev/full");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("cannot write standard output: No space left on device"), std::string::npos)
        << args << ": " << r.output;
  }
}

// analyze refused a meta value of the wrong type without naming it, while
// report and compare took the file: now one reader refuses it for all.
TEST(Cli, WrongTypedMetaIsRefusedAlikeByEveryCommandNamingFileSeriesAndKey) {
  const auto dir = test::fresh_temp_dir("cli_meta");
  std::stringstream text;
  text << std::ifstream(recorded_path("h100/divergence_triples_first.json")).rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str());
  j["series"][0]["meta"]["stride_bytes"] = "wide";
  const std::string id = j["series"][0]["id"];
  const std::string path = (dir / "results.json").string();
  std::ofstream(path) << j.dump();
  for (const std::string& args : {"analyze " + path, "report " + path + " --out -",
                                  "compare " + path + " " + path + " --out " + (dir / "c.html").string()}) {
    const auto r = run_gpuscope(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("results file '" + path + "'"), std::string::npos) << args << ": " << r.output;
    EXPECT_NE(r.output.find("series[0].meta.stride_bytes: expected a number, got string (series '" + id + "')"),
              std::string::npos)
        << args << ": " << r.output;
  }
}

TEST(Cli, NulByteMidFileIsNamedWithItsOffset) {
  const auto dir = test::fresh_temp_dir("cli_nul");
  const std::string path = (dir / "results.json").string();
  std::ofstream(path) << std::string("{\"schema\": ") + '\0' + "\"gpuscope.results/1\"}";
  const auto r = run_gpuscope("analyze " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a NUL byte at offset 11"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("ends early"), std::string::npos) << r.output;
}

// The reproducer: y = -1 in a partition series crashed `analyze`.
TEST(Cli, AnalyzeSetsAsideASeriesWithANegativeValueAndSaysWhy) {
  const auto dir = test::fresh_temp_dir("cli_negative");
  std::stringstream text;
  text << std::ifstream(recorded_path("h100/divergence_triples_first.json")).rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str());
  for (auto& s : j["series"])
    if (s["id"] == "divergence.partition_triples") s["points"][1]["y"] = -1;
  std::ofstream(dir / "results.json") << j.dump();
  const auto r =
      run_gpuscope("analyze " + (dir / "results.json").string() + " --out " + (dir / "once").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("series divergence.partition_triples not analysed: points[1].y: -1 is negative"),
            std::string::npos)
      << r.output;
  // Recorded in the results' skipped list, once however often re-analysed.
  const auto again = run_gpuscope("analyze " + (dir / "once" / "results.json").string() + " --out " +
                                  (dir / "twice").string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  std::stringstream written;
  written << std::ifstream(dir / "twice" / "results.json").rdbuf();
  const nlohmann::json skipped = nlohmann::json::parse(written.str())["skipped"];
  ASSERT_EQ(skipped.size(), 1u) << skipped.dump();
  EXPECT_EQ(skipped[0]["probe"], "divergence");
}

}  // namespace
}  // namespace gpuscope::test
