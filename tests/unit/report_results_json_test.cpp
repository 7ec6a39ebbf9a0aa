#include "report/results_json.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Doubles chosen to break a printer that is not round-trip exact.
const std::vector<double> kAwkwardDoubles = {0.1,  1.0 / 3.0,           5e-324, 1.7976931348623157e308, -0.0,
                                             1e-7, 123456789.123456789, 2.0};

Results populated_results() {
  Results r;
  r.tool_version = "0.1.0";
  r.device.id = "opencl:0:1";
  r.device.name = "Test GPU \"quoted\" \xc3\xa9";
  r.device.vendor = "ACME";
  r.device.type = "gpu";
  r.device.api = "OpenCL 3.0";
  r.device.driver_version = "535.1";
  r.device.platform = "ACME CL";
  r.device.compute_units = 68;
  r.device.clock_mhz = 1710;
  r.device.global_mem_bytes = (uint64_t{1} << 53) + 1;  // not representable as a double
  r.device.max_alloc_bytes = 4ull << 30;
  r.device.local_mem_bytes = 48 * 1024;
  r.device.local_mem_dedicated = true;
  r.device.global_cache_bytes = 6ull << 20;
  r.device.global_cache_line_bytes = 128;
  r.device.address_bits = 32;
  r.device.max_work_group_size = 1024;
  r.device.profiling = false;
  r.device.extensions = {"cl_khr_fp64", "cl_khr_fp16"};
  r.device.features = {.fp64 = true,
                       .fp16 = true,
                       .subgroup_sizes = {32},
                       .inline_asm = "nvidia-ptx",
                       .isa_version = 9.0,
                       .cycle_counter = true,
                       .instruction_bytes = 16};
  r.device.vendor_info = {{"warp_size", 32}, {"nested", {{"a", {1, 2}}}}};

  Series s;
  s.id = "latency.global";
  s.probe = "latency";
  s.x = {"footprint", "B"};
  s.y = {"latency", "ns"};
  for (size_t i = 0; i < kAwkwardDoubles.size(); ++i)
    s.points.push_back({static_cast<double>(1024 << i),
                        kAwkwardDoubles[i],
                        {kAwkwardDoubles[i], 1.49, kAwkwardDoubles[(i + 1) % kAwkwardDoubles.size()]}});
  s.points.push_back({99.0, 1.0, {}});
  s.meta = {{"stride_bytes", 64}, {"hops", 1 << 20}};
  r.series.push_back(s);
  Series empty;
  empty.id = "empty";
  empty.probe = "none";
  r.series.push_back(empty);

  Finding capacity;
  capacity.id = "memory.L1.capacity_bytes";
  capacity.value = 49152.0;
  capacity.unit = "B";
  capacity.low = 45056.0;
  capacity.high = 53248.0;
  capacity.confidence = 0.9;
  capacity.evidence = {"latency.global"};
  capacity.method = "knee of the latency curve";
  capacity.note = "shared with texture";
  Finding shared;
  shared.id = "texture.shares_l1";
  shared.value = true;
  shared.confidence = 0.3;
  shared.low = 0.0;  // one bound set without the other
  Finding cliffs;
  cliffs.id = "exec.registers.occupancy_cliffs";
  cliffs.value = std::vector<double>{32, 64, 128.5};
  cliffs.confidence = 1.0 / 3.0;
  Finding empty_list;
  empty_list.id = "exec.empty";
  empty_list.value = std::vector<double>{};
  r.findings = {capacity, shared, cliffs, empty_list};

  r.skipped = {{"texture", "unsupported: no image support"}, {"icache", "build failure:\nlog"}};
  r.run = {{"argv", {"gpuscope", "run"}}, {"probe_wall_s", {{"latency", 1.25}}}};
  return r;
}

// Bitwise, so that -0.0 vs 0.0 and a lost last digit both fail.
void expect_same_double(double a, double b, const std::string& where) {
  if (std::isnan(a) && std::isnan(b)) return;
  EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)) << where << ": " << a << " vs " << b;
}

void expect_same_doubles(const std::vector<double>& a, const std::vector<double>& b,
                         const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i) expect_same_double(a[i], b[i], where);
}

void expect_same(const DeviceInfo& a, const DeviceInfo& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.vendor, b.vendor);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.api, b.api);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.platform, b.platform);
  EXPECT_EQ(a.compute_units, b.compute_units);
  EXPECT_EQ(a.clock_mhz, b.clock_mhz);
  EXPECT_EQ(a.global_mem_bytes, b.global_mem_bytes);
  EXPECT_EQ(a.max_alloc_bytes, b.max_alloc_bytes);
  EXPECT_EQ(a.local_mem_bytes, b.local_mem_bytes);
  EXPECT_EQ(a.local_mem_dedicated, b.local_mem_dedicated);
  EXPECT_EQ(a.global_cache_bytes, b.global_cache_bytes);
  EXPECT_EQ(a.global_cache_line_bytes, b.global_cache_line_bytes);
  EXPECT_EQ(a.address_bits, b.address_bits);
  EXPECT_EQ(a.max_work_group_size, b.max_work_group_size);
  EXPECT_EQ(a.profiling, b.profiling);
  EXPECT_EQ(a.extensions, b.extensions);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.vendor_info, b.vendor_info);
}

void expect_same(const Results& a, const Results& b) {
  EXPECT_EQ(a.tool_version, b.tool_version);
  expect_same(a.device, b.device);
  ASSERT_EQ(a.series.size(), b.series.size());
  for (size_t i = 0; i < a.series.size(); ++i) {
    const Series& sa = a.series[i];
    const Series& sb = b.series[i];
    EXPECT_EQ(sa.id, sb.id);
    EXPECT_EQ(sa.probe, sb.probe);
    EXPECT_EQ(sa.x.name, sb.x.name);
    EXPECT_EQ(sa.x.unit, sb.x.unit);
    EXPECT_EQ(sa.y.name, sb.y.name);
    EXPECT_EQ(sa.y.unit, sb.y.unit);
    EXPECT_EQ(sa.meta, sb.meta);
    ASSERT_EQ(sa.points.size(), sb.points.size());
    for (size_t k = 0; k < sa.points.size(); ++k) {
      const std::string where = sa.id + " point " + std::to_string(k);
      expect_same_double(sa.points[k].x, sb.points[k].x, where + " x");
      expect_same_double(sa.points[k].y, sb.points[k].y, where + " y");
      expect_same_doubles(sa.points[k].samples, sb.points[k].samples, where + " samples");
    }
  }
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& fa = a.findings[i];
    const Finding& fb = b.findings[i];
    EXPECT_EQ(fa.id, fb.id);
    ASSERT_EQ(fa.value.index(), fb.value.index()) << fa.id;
    if (const auto* d = std::get_if<double>(&fa.value)) {
      expect_same_double(*d, std::get<double>(fb.value), fa.id);
    } else if (const auto* v = std::get_if<bool>(&fa.value)) {
      EXPECT_EQ(*v, std::get<bool>(fb.value));
    } else {
      expect_same_doubles(std::get<std::vector<double>>(fa.value), std::get<std::vector<double>>(fb.value),
                          fa.id);
    }
    EXPECT_EQ(fa.unit, fb.unit);
    EXPECT_EQ(fa.low, fb.low) << fa.id;
    EXPECT_EQ(fa.high, fb.high) << fa.id;
    expect_same_double(fa.confidence, fb.confidence, fa.id + " confidence");
    EXPECT_EQ(fa.evidence, fb.evidence);
    EXPECT_EQ(fa.method, fb.method);
    EXPECT_EQ(fa.note, fb.note);
  }
  ASSERT_EQ(a.skipped.size(), b.skipped.size());
  for (size_t i = 0; i < a.skipped.size(); ++i) {
    EXPECT_EQ(a.skipped[i].probe, b.skipped[i].probe);
    EXPECT_EQ(a.skipped[i].reason, b.skipped[i].reason);
  }
  EXPECT_EQ(a.run, b.run);
}

// A fresh directory per test, removed afterwards.
class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gpuscope_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_text(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

// Runs `f`, expects a UsageError whose one-line message holds every part.
template <class F>
void expect_usage_error(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no UsageError thrown";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

void expect_malformed(const json& j, const std::vector<std::string>& parts) {
  expect_usage_error([&] { results_from_json(j); }, parts);
}

TEST(ResultsJson, WritesTheContractKeys) {
  // at() rather than [] so that a missing key fails the test instead of asserting.
  const json j = to_json(populated_results());
  EXPECT_EQ(j.at("schema"), "gpuscope.results/1");
  EXPECT_EQ(j.at("tool"), (json{{"name", "gpuscope"}, {"version", "0.1.0"}}));
  for (const char* key : {"device", "series", "findings", "skipped", "run"})
    EXPECT_TRUE(j.contains(key)) << key;
  const json& f = j.at("findings").at(0);
  EXPECT_EQ(f.at("value"), 49152.0);
  EXPECT_EQ(f.at("low"), 45056.0);
  EXPECT_EQ(f.at("high"), 53248.0);
  EXPECT_EQ(f.at("note"), "shared with texture");
  const json& boolean = j.at("findings").at(1);
  EXPECT_TRUE(boolean.at("value").is_boolean());
  EXPECT_FALSE(boolean.contains("high"));
  EXPECT_FALSE(boolean.contains("note"));
  EXPECT_TRUE(j.at("findings").at(2).at("value").is_array());
  const json& point = j.at("series").at(0).at("points").at(0);
  EXPECT_EQ(point.size(), 3u);
  EXPECT_TRUE(point.contains("samples"));
  for (const char* key : {"id",
                          "name",
                          "vendor",
                          "type",
                          "api",
                          "driver_version",
                          "platform",
                          "compute_units",
                          "clock_mhz",
                          "global_mem_bytes",
                          "max_alloc_bytes",
                          "local_mem_bytes",
                          "local_mem_dedicated",
                          "global_cache_bytes",
                          "global_cache_line_bytes",
                          "address_bits",
                          "max_work_group_size",
                          "profiling",
                          "extensions",
                          "features",
                          "vendor_info"})
    EXPECT_TRUE(j.at("device").contains(key)) << key;
}

TEST(ResultsJson, RoundTripThroughTextIsLossless) {
  const Results original = populated_results();
  const std::string text = to_json(original).dump(2);
  const Results back = results_from_json(json::parse(text));
  expect_same(original, back);
  EXPECT_EQ(to_json(back).dump(2), text);
}

// A raster trace (point i at x = i, its y its one sample) is written as its
// y values alone and reads back as the same points; a long series that
// breaks the pattern anywhere keeps its points.
TEST(ResultsJson, LongTracesAreWrittenAsTheirYValuesAndReadBackWhole) {
  Results r = populated_results();
  Series trace;
  trace.id = "graphics.raster.order";
  trace.probe = "raster";
  for (uint32_t i = 0; i < 5000; ++i) {
    const double y = static_cast<double>((i * 7919u) % 5000u);
    trace.points.push_back({static_cast<double>(i), y, {y}});
  }
  Series almost = trace;
  almost.id = "graphics.raster.order_wide";
  almost.points[4321].samples = {1, 2};
  r.series.push_back(trace);
  r.series.push_back(almost);
  const json j = to_json(r);
  const json& written_trace = j.at("series").at(j.at("series").size() - 2);
  EXPECT_FALSE(written_trace.contains("points"));
  ASSERT_TRUE(written_trace.contains("points_y"));
  EXPECT_EQ(written_trace.at("points_y").size(), 5000u);
  EXPECT_TRUE(j.at("series").back().contains("points"));
  const Results back = results_from_json(json::parse(j.dump(2)));
  expect_same(r, back);
}

// Whatever gpuscope writes it reads back (issue 46: analyze wrote a 156 MB
// results.json, a 24 MB file's long series indented a number a line, that
// gpuscope then refused). Past the limit indented, the text is compact; past
// it compact, nothing is written and the message says why.
TEST(ResultsJson, WrittenTextStaysWithinWhatIsReadBack) {
  Results r = populated_results();
  Series trace;
  trace.id = "x.long";
  trace.probe = "x";
  for (uint32_t i = 0; i < 20000; ++i) {
    const double y = i % 2 ? std::numeric_limits<double>::quiet_NaN() : 1.0;  // a NaN keeps it a trace
    trace.points.push_back({static_cast<double>(i), y, {y}});
  }
  r.series.push_back(trace);
  const size_t indented = results_file_text(r, "results.json").size();
  const size_t compact = to_json(r).dump().size() + 1;
  ASSERT_LT(compact * 2, indented) << "the case needs a series that indenting makes much longer";
  const std::string text = results_file_text(r, "results.json", compact + 16);
  EXPECT_EQ(text.size(), compact);
  expect_same(r, parse_results_text(text, "results.json"));
  EXPECT_TRUE(to_json(r)["series"].back().contains("points_y")) << "NaN points are still a trace";
  try {
    results_file_text(r, "out/results.json", compact - 1);
    FAIL() << "text past the limit was returned";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out/results.json"), std::string::npos) << what;
    EXPECT_NE(what.find("not written"), std::string::npos) << what;
  }
}

TEST(ResultsJson, NonFiniteNumbersReadBackAsNaN) {
  Results r = populated_results();
  r.series[0].points[0].y = std::numeric_limits<double>::quiet_NaN();
  const Results back = results_from_json(json::parse(to_json(r).dump()));
  EXPECT_TRUE(std::isnan(back.series[0].points[0].y));
}

TEST(ResultsJson, DeviceRoundTrip) {
  const DeviceInfo d = populated_results().device;
  expect_same(d, device_from_json(json::parse(device_to_json(d).dump())));
}

TEST(ResultsJson, OptionalDeviceFieldsDefault) {
  const DeviceInfo d =
      device_from_json({{"id", "sim:x"}, {"name", "x"}, {"vendor", "v"}, {"type", "sim"}, {"api", "sim"}});
  EXPECT_EQ(d.compute_units, 0u);
  EXPECT_EQ(d.address_bits, 64u);
  EXPECT_TRUE(d.profiling);
}

// Every DeviceFeatures field away from its default survives a round trip,
// so a field missing from results_json's feature table fails here (a new
// feature belongs in this list too).
TEST(ResultsJson, EveryFeatureRoundTrips) {
  DeviceInfo d = populated_results().device;
  d.features = {.fp64 = true,
                .fp16 = true,
                .int64_atomics = true,
                .integer_dot_product = true,
                .images = true,
                .host_mapping = true,
                .shared_virtual_memory = true,
                .subgroup_sizes = {16, 32},
                .subgroup_size_control = true,
                .inline_asm = "nvidia-ptx",
                .isa_version = 9.0,
                .cycle_counter = true,
                .instruction_bytes = 16,
                .matrix_shapes = {{"f16", "f16", "f32", "f32", 16, 16, 16, false},
                                  {"s8", "s8", "s32", "s32", 16, 8, 32, true}},
                .max_loop_trips = 65535};
  EXPECT_EQ(device_from_json(json::parse(device_to_json(d).dump())).features, d.features);
}

// A file written before a feature existed reads it as its default.
TEST(ResultsJson, MissingFeaturesReadAsDefaults) {
  json j = device_to_json(populated_results().device);
  j["features"] = json::object();
  EXPECT_EQ(device_from_json(j).features, DeviceFeatures{});
  j["features"] = {{"fp16", true}, {"matrix_shapes", json::array()}};
  DeviceFeatures want;
  want.fp16 = true;
  EXPECT_EQ(device_from_json(j).features, want);
  j["features"]["matrix_shapes"] = {{{"a", "f16"}}};
  EXPECT_THROW(device_from_json(j), UsageError);  // a shape without its other keys
}

TEST(ResultsJson, ToleratesUnknownKeys) {
  json j = to_json(populated_results());
  j["added_in_a_later_version"] = {1, 2, 3};
  j["findings"][0]["extra"] = "x";
  j["series"][0]["points"][0]["weight"] = 2;
  j["device"]["new_query"] = true;
  const Results r = results_from_json(j);
  EXPECT_EQ(r.findings.size(), 4u);
}

TEST(ResultsJson, RunIsOptional) {
  json j = to_json(populated_results());
  j.erase("run");
  EXPECT_EQ(results_from_json(j).run, json::object());
}

TEST(ResultsJson, MalformedInputsNameThePath) {
  const json good = to_json(populated_results());

  expect_malformed(json::array({1, 2}), {"top level", "expected an object, got array"});

  json j = good;
  j["schema"] = "gpuscope.results/2";
  expect_malformed(j, {"schema", "gpuscope.results/1", "gpuscope.results/2"});

  j = good;
  j.erase("findings");
  expect_malformed(j, {"findings: required key is missing"});

  j = good;
  j["series"][0]["points"][1]["x"] = "1024";
  expect_malformed(j, {"series[0].points[1].x: expected a number, got string"});

  j = good;
  j["findings"][1]["value"] = {{"v", 1}};
  expect_malformed(j,
                   {"findings[1].value: expected a number, a boolean, a string or an array of numbers", "got object"});

  j = good;
  j["findings"][2]["value"][1] = "64";
  expect_malformed(j, {"findings[2].value[1]: expected a number"});

  j = good;
  j["findings"][0].erase("confidence");
  expect_malformed(j, {"findings[0].confidence: required key is missing"});

  j = good;
  j["series"] = json::object();
  expect_malformed(j, {"series: expected an array, got object"});

  j = good;
  j["device"]["compute_units"] = -1;
  expect_malformed(j, {"device.compute_units: expected a non-negative integer"});

  j = good;
  j["device"]["clock_mhz"] = uint64_t{1} << 40;
  expect_malformed(j, {"device.clock_mhz", "out of range"});

  j = good;
  j["skipped"][1].erase("reason");
  expect_malformed(j, {"skipped[1].reason: required key is missing"});

  j = good;
  j["series"][0]["meta"] = "stride 64";
  expect_malformed(j, {"series[0].meta: expected an object, got string"});

  // A meta value the analysis reads, of the wrong type: refused here, by
  // the one reader every command uses, naming the series and the key.
  j = good;
  j["series"][0]["meta"]["stride_bytes"] = "64";
  expect_malformed(j, {"series[0].meta.stride_bytes: expected a number, got string",
                       "(series '" + j["series"][0]["id"].get<std::string>() + "')"});
  j = good;
  j["series"][0]["meta"]["method"] = 3;
  expect_malformed(j, {"series[0].meta.method: expected a string, got number"});
  j = good;
  j["series"][0]["meta"]["detail"] = json::object();
  expect_malformed(j, {"series[0].meta.detail: expected an array, got object"});
}

TEST_F(ResultsFileTest, RoundTripThroughFile) {
  const Results original = populated_results();
  const std::string path = (dir_ / "results.json").string();
  write_results_file_atomic(original, path);
  expect_same(original, read_results_file(path));
}

TEST_F(ResultsFileTest, MissingFile) {
  const std::string path = (dir_ / "nope.json").string();
  expect_usage_error([&] { read_results_file(path); }, {path, "No such file"});
}

TEST_F(ResultsFileTest, Directory) {
  expect_usage_error([&] { read_results_file(dir_.string()); }, {dir_.string(), "directory"});
}

TEST_F(ResultsFileTest, EmptyFile) {
  const std::string path = write_text("empty.json", "");
  expect_usage_error([&] { read_results_file(path); }, {path, "is empty"});
  const std::string blank = write_text("blank.json", " \n\n");
  expect_usage_error([&] { read_results_file(blank); }, {blank, "is empty"});
}

TEST_F(ResultsFileTest, TruncatedFile) {
  const std::string text = to_json(populated_results()).dump(2);
  const std::string path = write_text("cut.json", text.substr(0, text.size() / 2));
  expect_usage_error([&] { read_results_file(path); },
                     {path, "not valid JSON", "ends early at line", "(truncated?)"});
}

TEST_F(ResultsFileTest, NotJson) {
  const std::string path = write_text("garbage.json", "latency 18.4 ns\n");
  expect_usage_error([&] { read_results_file(path); }, {path, "not valid JSON", "line 1"});
}

TEST_F(ResultsFileTest, ValidJsonButNotResults) {
  const std::string path = write_text("other.json", R"({"schema": "something/else"})");
  expect_usage_error([&] { read_results_file(path); },
                     {path, "schema", "gpuscope.results/1", "something/else"});
  const std::string list = write_text("list.json", "[1, 2]");
  expect_usage_error([&] { read_results_file(list); }, {list, "expected an object"});
}

TEST_F(ResultsFileTest, AtomicWriteLeavesNoTempFileAndReplaces) {
  const std::string path = (dir_ / "results.json").string();
  Results r = populated_results();
  write_results_file_atomic(r, path);
  r.tool_version = "0.2.0";
  r.findings.pop_back();
  write_results_file_atomic(r, path);

  EXPECT_EQ(entries(), std::vector<std::string>{"results.json"});
  const Results back = read_results_file(path);
  EXPECT_EQ(back.tool_version, "0.2.0");
  EXPECT_EQ(back.findings.size(), 3u);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_read, fs::perms::others_read);
}

TEST_F(ResultsFileTest, AtomicWriteCreatesTheDirectory) {
  const fs::path path = dir_ / "a" / "b" / "results.json";
  write_results_file_atomic(populated_results(), path.string());
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(read_results_file(path.string()).tool_version, "0.1.0");
}

TEST_F(ResultsFileTest, AtomicWriteInTheCurrentDirectory) {
  const fs::path previous = fs::current_path();
  fs::current_path(dir_);
  write_results_file_atomic(populated_results(), "results.json");
  fs::current_path(previous);
  EXPECT_EQ(entries(), std::vector<std::string>{"results.json"});
}

TEST_F(ResultsFileTest, WriteFailingHalfWayKeepsThePreviousFile) {
  const std::string path = (dir_ / "results.json").string();
  write_results_file_atomic(populated_results(), path);
  const auto previous_size = fs::file_size(path);

  // A file size limit makes write() fail part-way (EFBIG) like a full disk.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Results bigger = populated_results();
  bigger.tool_version = "0.2.0";
  EXPECT_THROW(write_results_file_atomic(bigger, path), std::runtime_error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);

  EXPECT_EQ(entries(), std::vector<std::string>{"results.json"});
  EXPECT_EQ(fs::file_size(path), previous_size);
  EXPECT_EQ(read_results_file(path).tool_version, "0.1.0");
}

TEST_F(ResultsFileTest, FailedWriteThrowsAndCleansUp) {
  // The target is a directory, so the final rename fails after the temp file
  // was written; the temp file must not be left behind.
  fs::create_directories(dir_ / "results.json" / "inside");
  EXPECT_THROW(write_results_file_atomic(populated_results(), (dir_ / "results.json").string()),
               std::runtime_error);
  EXPECT_EQ(entries(), std::vector<std::string>{"results.json"});
  EXPECT_TRUE(fs::is_directory(dir_ / "results.json"));

  // The parent is a regular file: the directory cannot be created.
  const std::string file = write_text("plain", "x");
  EXPECT_THROW(write_results_file_atomic(populated_results(), file + "/results.json"), std::runtime_error);
}

}  // namespace
}  // namespace gpuscope
