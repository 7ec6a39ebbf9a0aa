// report.html in a real browser: headless Chromium loads the page of a
// recorded PoCL run, runs its scripts and dumps the DOM; report.js's contract
// (report.js, top) says <body> then carries data-charts, data-drawn,
// data-errors and data-ready. A screenshot lands in the build directory
// (report_browser/report.png) for a person to look at. Skipped, with the
// reason, where no chromium is installed (scripts/setup.sh installs it).
#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "cli_runner.hpp"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

// The first of `names` found on PATH, or "".
std::string find_on_path(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (const char* name : names) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
      std::error_code ec;
      if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return "";
}

// stdout only: Chromium writes dbus and GPU noise to stderr.
std::string run_stdout(const std::string& cmd, int* exit_code) {
  std::string out;
  FILE* pipe = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// An attribute of the first <body ...> tag, or "" when absent.
std::string body_attribute(const std::string& dom, const std::string& name) {
  const size_t at = dom.find("<body");
  if (at == std::string::npos) return "";
  const std::string tag = dom.substr(at, dom.find('>', at) - at);
  std::smatch m;
  if (std::regex_search(tag, m, std::regex(" " + name + "=\"([^\"]*)\""))) return m[1];
  return "";
}

TEST(ReportBrowser, ChromiumDrawsEveryChartWithoutScriptErrors) {
  const std::string chromium = find_on_path({"chromium", "chromium-browser", "google-chrome"});
  if (chromium.empty())
    GTEST_SKIP() << "no chromium on PATH (scripts/setup.sh installs it): report.html not rendered";

  const fs::path dir = fs::path(GPUSCOPE_BINARY).parent_path() / "report_browser";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path html = dir / "report.html";
  const auto r = test::run_gpuscope("report " + std::string(GPUSCOPE_TEST_DATA) +
                                    "/pocl_xeon_basic_full_quick.json --out " + html.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // A profile directory of its own: no user profile, no lock held by another run.
  const std::string common = "timeout 60 " + chromium +
                             " --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=" +
                             (dir / "profile").string() + " --virtual-time-budget=5000 ";
  int code = -1;
  const std::string dom = run_stdout(common + "--dump-dom file://" + html.string() + "#selftest", &code);
  ASSERT_EQ(code, 0) << "chromium --dump-dom failed";
  ASSERT_NE(dom.find("<body"), std::string::npos) << dom.substr(0, 2000);
  const std::string charts = body_attribute(dom, "data-charts");
  EXPECT_EQ(body_attribute(dom, "data-ready"), "1") << "report.js never finished";
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0") << "script errors in the page";
  ASSERT_FALSE(charts.empty());
  EXPECT_GT(std::stoi(charts), 10) << "the recorded run has dozens of series";
  EXPECT_EQ(body_attribute(dom, "data-drawn"), charts) << "some charts did not draw";
  // Every canvas drew something: a blank chart has no painted pixels.
  EXPECT_EQ(dom.find("data-painted=\"0\""), std::string::npos) << "a chart drew nothing";
  EXPECT_NE(dom.find("data-painted=\""), std::string::npos) << "#selftest did not count painted pixels";

  const fs::path png = dir / "report.png";
  run_stdout(common + "--window-size=1400,3000 --screenshot=" + png.string() + " file://" + html.string(),
             &code);
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(fs::exists(png) && fs::file_size(png) > 10000) << "no screenshot at " << png;
  fs::remove_all(dir / "profile");
}

}  // namespace
}  // namespace gpuscope
