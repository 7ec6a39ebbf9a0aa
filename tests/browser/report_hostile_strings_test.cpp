// Every string field of a results file made hostile (markup that runs a
// script where it is not escaped, a closing </script>, quotes, bidirectional
// overrides and isolates, line and paragraph separators, C0 controls), then
// through report, analyze and compare: no output carries the raw characters
// that deceive a reader, no HTML or SVG carries live markup, and Chromium
// runs nothing of it in report.html, analyze's report.html or compare.html.
// Chromium's part is skipped, with the reason, where none is installed.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report/results_json.hpp"
#include "support/cli.hpp"
#include "support/graphics_results.hpp"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The characters no output may carry raw: bidirectional embeddings and
// overrides (U+202A..U+202E), isolates (U+2066..U+2069), the directional
// marks (U+200E, U+200F, U+061C), line and paragraph separators (U+2028,
// U+2029), and the C0 controls ESC and BEL.
const std::vector<std::pair<std::string, std::string>> kDeceivers = {
    {"U+202A", "\u202A"}, {"U+202B", "\u202B"}, {"U+202C", "\u202C"}, {"U+202D", "\u202D"},
    {"U+202E", "\u202E"}, {"U+2066", "\u2066"}, {"U+2067", "\u2067"}, {"U+2068", "\u2068"},
    {"U+2069", "\u2069"}, {"U+200E", "\u200E"}, {"U+200F", "\u200F"}, {"U+061C", "\u061C"},
    {"U+2028", "\u2028"}, {"U+2029", "\u2029"}, {"ESC", "\x1b"},      {"BEL", "\x07"},
};

// Hostile string number `n`: each payload, run, marks the page's root with
// data-pwned="n", so that the test names the field that got through.
std::string hostile(size_t n) {
  const std::string mark = fmt::format("document.documentElement.setAttribute('data-pwned','{}')", n);
  std::string s = fmt::format("h{} <img src=x onerror=\"{}\"></script><script>{}</script>\"'><svg onload=\"{}\">",
                              n, mark, mark, mark);
  for (const auto& [name, raw] : kDeceivers) s += raw;
  return s + "\x1b[31m red";
}

// The same original string always becomes the same hostile one, so that
// references between fields (a finding's evidence and its series' id, a
// finding's unit and its chart's axis) still hold.
class Hostiliser {
 public:
  // `keep`: whether the string at a JSON pointer stays as it is.
  explicit Hostiliser(std::function<bool(const std::string&)> keep) : keep_(std::move(keep)) {}

  void walk(json& j, const std::string& pointer) {
    if (j.is_string()) {
      if (!keep_(pointer)) j = of(j.get<std::string>());
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) walk(j[i], pointer + "/" + std::to_string(i));
    } else if (j.is_object()) {
      for (auto& [k, v] : j.items()) walk(v, pointer + "/" + k);
    }
  }

  std::string of(const std::string& original) {
    const auto [it, added] = map_.try_emplace(original, "");
    if (added) it->second = hostile(map_.size());
    return it->second;
  }

 private:
  std::function<bool(const std::string&)> keep_;
  std::map<std::string, std::string> map_;
};

// A results file with a value in every string field the format has: a real
// run (every device field, run, unfound) with every graphics series and
// finding, a skipped probe, a driver snapshot with facts and notes, every
// reason a series' meta can give, and string and list findings.
json every_field() {
  std::ifstream in(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/examples/pocl/results.json");
  json j = json::parse(in);
  const json graphics = to_json(test::graphics_results());
  for (const auto& s : graphics["series"]) j["series"].push_back(s);
  for (const auto& f : graphics["findings"]) j["findings"].push_back(f);
  j["skipped"].push_back({{"probe", "sustain"}, {"reason", "the device was lost"}});
  j["unfound"].push_back({{"id", "memory.L3.capacity_bytes"}, {"reason", "no knee"}, {"evidence", {"latency.global"}}});
  j["device"]["extensions"].push_back("cl_khr_fp64");
  j["device"]["vendor_info"]["board"] = "a board";
  j["device"]["driver"] = json::array(
      {{{"when", "start"},
        {"driver", "amdgpu"},
        {"notes", {"power cap read failed"}},
        {"facts",
         {{{"key", "clock.max_mhz"}, {"value", 2100}, {"unit", "MHz"}, {"source", "pp_dpm_sclk"}},
          {{"key", "model"}, {"value", "Navi 31"}, {"unit", ""}, {"source", "gpuinfo"}}}}},
       {{"when", "end"}, {"driver", "amdgpu"}, {"notes", json::array()}, {"facts", json::array()}}});
  json& meta = j["series"][0]["meta"];
  meta["unsupported"] = "no fp64";
  meta["not_measurable"] = {{"64", "too slow"}};
  meta["not_measured_time_budget"] = {"kernel a"};
  meta["sharing_skipped"] = "one compute unit";
  meta["cut_short"] = "out of time";
  meta["stopped"] = "noise";
  meta["error"] = "failed";
  j["series"][1]["meta"]["unsupported"] = json::array({{{"series", "compute.fp64"}, {"reason", "no fp64"}}});
  j["findings"].push_back({{"id", "device.name_string"},
                           {"value", "a name"},
                           {"unit", ""},
                           {"confidence", 0.9},
                           {"evidence", json::array()},
                           {"method", "read"},
                           {"note", "a note"}});
  j["findings"].push_back({{"id", "compute.subgroup_sizes"},
                           {"value", {8, 16, 32}},
                           {"unit", "lanes"},
                           {"confidence", 0.9},
                           {"evidence", {"latency.global"}},
                           {"method", "listed"},
                           {"note", "a note"}});
  for (auto& f : j["findings"]) f["note"] = f.value("note", std::string("note"));
  return j;
}

// Every object under a series' meta, the run, vendor_info and the driver
// snapshots gains a hostile key as well.
void add_hostile_keys(json& j, Hostiliser& h, const std::string& tag) {
  if (j.is_array())
    for (auto& v : j) add_hostile_keys(v, h, tag);
  if (!j.is_object()) return;
  for (auto& [k, v] : j.items()) add_hostile_keys(v, h, tag);
  j[h.of("key " + tag)] = h.of("value " + tag);
}

// The two files: every string hostile, ids included; and every string but
// the ids a report looks up (series, findings and their evidence), so that
// the graphics section and the catalogued findings are reached too.
std::pair<json, json> hostile_files() {
  const json base = every_field();
  const auto fixed = [](const std::string& p) { return p == "/schema" || p == "/tool/name"; };
  Hostiliser h([&](const std::string& p) { return fixed(p); });
  json all = base;
  h.walk(all, "");
  const std::regex id_field(R"(^/(series|findings|unfound)/[0-9]+/(id|evidence(/[0-9]+)?)$)");
  Hostiliser h2([&](const std::string& p) { return fixed(p) || std::regex_match(p, id_field); });
  json values = base;
  h2.walk(values, "");
  for (json* j : {&all, &values}) {
    add_hostile_keys((*j)["run"], h, "run");
    add_hostile_keys((*j)["device"]["vendor_info"], h, "vendor");
    for (auto& s : (*j)["series"]) add_hostile_keys(s["meta"], h, "meta");
  }
  // One device, so that compare reconciles the two.
  values["device"] = all["device"];
  return {all, values};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What no output may hold: a raw deceiving character.
void expect_no_deceivers(const std::string& text, const std::string& what) {
  for (const auto& [name, raw] : kDeceivers)
    EXPECT_EQ(text.find(raw), std::string::npos) << what << " holds a raw " << name;
}

// What no HTML or SVG may hold besides: the payloads' markup, live.
void expect_no_live_markup(const std::string& text, const std::string& what) {
  for (const char* live : {"<img src=x", "<svg onload", "<script>document", "onerror=\"document"})
    EXPECT_EQ(text.find(live), std::string::npos) << what << " holds " << live;
}

std::string find_chromium() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return p.string();
    }
  }
  return "";
}

// The DOM Chromium holds after running the page's scripts.
std::string dump_dom(const std::string& chromium, const fs::path& html, const fs::path& profile) {
  const std::string cmd = "timeout 60 " + chromium +
                          " --headless --no-sandbox --disable-gpu --user-data-dir=" + profile.string() +
                          " --virtual-time-budget=5000 --dump-dom file://" + html.string() + " 2>/dev/null";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

TEST(ReportHostileStrings, NoOutputCarriesLiveMarkupOrDeceivingCharacters) {
  const fs::path dir = fs::path(GPUSCOPE_BINARY).parent_path() / "report_browser" / "hostile";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto [all, values] = hostile_files();
  const fs::path all_path = dir / "all.json", values_path = dir / "values.json";
  std::ofstream(all_path) << all.dump(1);
  std::ofstream(values_path) << values.dump(1);

  std::vector<fs::path> pages;
  for (const auto& [name, path] : {std::pair{"all", all_path}, std::pair{"values", values_path}}) {
    const fs::path out = dir / name;
    fs::create_directories(out);
    const auto report = test::run_gpuscope("report " + path.string() + " --out " + (out / "report.html").string());
    ASSERT_EQ(report.exit_code, 0) << report.output;
    expect_no_deceivers(report.output, std::string(name) + ": report's terminal output");
    const auto md = test::run_gpuscope("report " + path.string() + " --format md --out " + (out / "report.md").string());
    ASSERT_EQ(md.exit_code, 0) << md.output;
    const auto analyze =
        test::run_gpuscope("analyze " + path.string() + " --out " + (out / "analyzed").string(), "NO_COLOR=1");
    ASSERT_EQ(analyze.exit_code, 0) << analyze.output;
    expect_no_deceivers(analyze.output, std::string(name) + ": analyze's terminal summary");
    const auto analyze_md = test::run_gpuscope("analyze " + path.string() + " --format md");
    ASSERT_EQ(analyze_md.exit_code, 0) << analyze_md.output;
    expect_no_deceivers(analyze_md.output, std::string(name) + ": analyze's Markdown summary");
    for (const fs::path& p : {out / "report.html", out / "analyzed" / "report.html", out / "diagram.svg",
                              out / "analyzed" / "diagram.svg"}) {
      const std::string text = slurp(p);
      ASSERT_FALSE(text.empty()) << p;
      expect_no_deceivers(text, p.string());
      expect_no_live_markup(text, p.string());
    }
    for (const fs::path& p : {out / "report.md", out / "analyzed" / "report.md"}) {
      const std::string text = slurp(p);
      ASSERT_FALSE(text.empty()) << p;
      expect_no_deceivers(text, p.string());
    }
    pages.push_back(out / "report.html");
    pages.push_back(out / "analyzed" / "report.html");
  }
  const fs::path compare_html = dir / "compare.html";
  const auto compare = test::run_gpuscope(
      "compare " + all_path.string() + " " + values_path.string() + " --out " + compare_html.string(), "NO_COLOR=1");
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  expect_no_deceivers(compare.output, "compare's terminal table");
  const auto compare_md =
      test::run_gpuscope("compare " + all_path.string() + " " + values_path.string() + " --format md --out " +
                         (dir / "compare_md.html").string());
  ASSERT_EQ(compare_md.exit_code, 0) << compare_md.output;
  expect_no_deceivers(compare_md.output, "compare's Markdown table");
  const std::string compare_text = slurp(compare_html);
  expect_no_deceivers(compare_text, "compare.html");
  expect_no_live_markup(compare_text, "compare.html");
  pages.push_back(compare_html);

  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on PATH (scripts/setup.sh installs it): pages not run";
  for (const fs::path& page : pages) {
    const std::string dom = dump_dom(chromium, page, dir / "profile");
    ASSERT_NE(dom.find("<body"), std::string::npos) << page << ": no DOM";
    std::smatch m;
    EXPECT_FALSE(std::regex_search(dom, m, std::regex("data-pwned=\"([0-9]+)\"")))
        << page << ": the payload of hostile string " << m[1] << " ran";
    EXPECT_NE(dom.find("data-ready=\"1\""), std::string::npos) << page << ": report.js never finished";
    EXPECT_NE(dom.find("data-errors=\"0\""), std::string::npos) << page << ": script errors in the page";
  }
  fs::remove_all(dir / "profile");
}

}  // namespace
}  // namespace gpuscope
