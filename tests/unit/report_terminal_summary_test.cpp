#include "report/terminal_summary.hpp"

#include "core/finding_catalogue.hpp"
#include "report/format.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace gpuscope {
namespace {

using test::make_finding;

// Findings deliberately out of order: the summary must sort them.
Results sample_results() {
  Results r;
  r.tool_version = "0.1.0";
  r.device.id = "opencl:0:0";
  r.device.name = "NVIDIA GeForce RTX 3080";
  r.device.vendor = "NVIDIA Corporation";
  r.device.type = "gpu";
  r.device.api = "OpenCL 3.0 CUDA 12.4";
  r.device.compute_units = 68;
  r.device.clock_mhz = 1710;
  r.device.global_mem_bytes = 10ull << 30;
  r.findings = {
      make_finding("host.zero_copy", false, "", 0.8),
      make_finding("exec.wave_width", 32.0, "", 0.99),
      make_finding("memory.dram.latency_ns", 480.2, "ns", 0.9),
      make_finding("memory.dram.bandwidth_gbps", 702.4, "GB/s", 0.85),
      make_finding("memory.L2.capacity_bytes", 5.0 * 1024 * 1024, "B", 0.35, 4.0 * 1024 * 1024,
                   6.0 * 1024 * 1024, {}, "the knee is soft; an L2 split in two partitions would blur it"),
      make_finding("memory.L2.latency_ns", 212.0, "ns", 0.8),
      make_finding("memory.L1.capacity_bytes", 49152.0, "B", 0.9, 45056.0, 53248.0),
      make_finding("memory.L1.latency_ns", 18.43, "ns", 0.95, 18.1, 18.9),
      make_finding("memory.cache_levels", 2.0, "", 0.7),
      make_finding("memory.line_bytes", 128.0, "B", 0.6),
      make_finding("exec.registers.occupancy_cliffs", std::vector<double>{32, 64, 128}, "", 0.4),
      make_finding("compute.fp32.fma.throughput_gops", 29768.0, "Gop/s", 0.9),
      make_finding("texture.shares_l1", true, "", 0.75, {}, {}, {},
                   "texture and load/store latencies rise at the same footprint"),
      make_finding("device.compute_units", 68.0, "", 1.0),
      make_finding("vendor.special", 1.0, "", 1.0),
  };
  r.skipped = {{"texture", "unsupported: the device has no image support"},
               {"icache", "build failure: kernel too large\nfull build log follows"}};
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first line containing every one of `parts`, or an empty string.
std::string line_with(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& line : lines_of(text)) {
    const bool all = std::all_of(parts.begin(), parts.end(),
                                 [&](const std::string& p) { return line.find(p) != std::string::npos; });
    if (all) return line;
  }
  return "";
}

size_t position_of(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  EXPECT_NE(at, std::string::npos) << "'" << part << "' missing from:\n" << text;
  return at;
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(49152), "48 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(2.0 * 1024 * 1024), "2 MiB");
  EXPECT_EQ(format_bytes(25.5 * 1024 * 1024), "25.5 MiB");
  EXPECT_EQ(format_bytes(1024.0 * 1024 * 1024), "1.00 GiB");
  EXPECT_EQ(format_bytes(10.0 * 1024 * 1024 * 1024), "10.0 GiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * 1024 * 1024 * 1024), "3.00 TiB");
}

TEST(FormatValue, ByUnit) {
  EXPECT_EQ(format_value(make_finding("a", 18.43, "ns", 1)), "18.4 ns");
  EXPECT_EQ(format_value(make_finding("a", 480.2, "ns", 1)), "480 ns");
  EXPECT_EQ(format_value(make_finding("a", 2.5, "ns", 1)), "2.50 ns");
  EXPECT_EQ(format_value(make_finding("a", 4.0, "cycles", 1)), "4 cycles");
  EXPECT_EQ(format_value(make_finding("a", 49152.0, "B", 1)), "48 KiB");
  EXPECT_EQ(format_value(make_finding("a", 32.0, "", 1)), "32");
  EXPECT_EQ(format_value(make_finding("a", 0.125, "", 1)), "0.125");
  EXPECT_EQ(format_value(make_finding("a", 0.015625, "", 1)), "0.015625");
  EXPECT_EQ(format_value(make_finding("a", 0.49872345, "", 1)), "0.499");
  EXPECT_EQ(format_value(make_finding("a", true, "", 1)), "yes");
  EXPECT_EQ(format_value(make_finding("a", false, "", 1)), "no");
  EXPECT_EQ(format_value(make_finding("a", std::vector<double>{32, 64, 128}, "", 1)), "32, 64, 128");
  EXPECT_EQ(format_value(make_finding("a", std::vector<double>{}, "", 1)), "none");
}

TEST(FormatSummary, HeaderNamesTheDevice) {
  const std::string header = lines_of(format_summary(sample_results())).at(0);
  for (const char* part :
       {"NVIDIA GeForce RTX 3080", "NVIDIA Corporation", "gpu", "68 compute units", "1710 MHz"})
    EXPECT_NE(header.find(part), std::string::npos) << part << " not in: " << header;
}

TEST(FormatSummary, LevelTableOrderedWithIntervals) {
  const std::string s = format_summary(sample_results());
  const std::string l1 = line_with(s, {"L1 ", "48 KiB [44 KiB .. 52 KiB]", "18.4 ns [18.1 ns .. 18.9 ns]"});
  const std::string l2 = line_with(s, {"L2 ", "5 MiB [4 MiB .. 6 MiB]", "212 ns"});
  const std::string dram = line_with(s, {"dram ", "480 ns", "702 GB/s"});
  EXPECT_FALSE(l1.empty()) << s;
  EXPECT_FALSE(l2.empty()) << s;
  EXPECT_FALSE(dram.empty()) << s;
  EXPECT_LT(s.find(l1), s.find(l2));
  EXPECT_LT(s.find(l2), s.find(dram));
  EXPECT_FALSE(line_with(s, {"level", "capacity", "latency", "bandwidth"}).empty()) << s;
  // Table cells are not repeated as finding lines.
  EXPECT_EQ(s.find("L1 capacity"), std::string::npos) << s;
}

TEST(FormatSummary, MarksLowConfidenceWithLegend) {
  const std::string s = format_summary(sample_results());
  const std::string l2 = line_with(s, {"L2 ", "5 MiB"});
  // The mark follows the uncertain cell (after its padding), not the whole row.
  EXPECT_TRUE(std::regex_search(l2, std::regex(R"(5 MiB \[4 MiB \.\. 6 MiB\] +\? +212 ns )"))) << l2;
  EXPECT_EQ(line_with(s, {"L1 ", "48 KiB"}).find('?'), std::string::npos) << s;
  const std::string cliffs = line_with(s, {"register occupancy cliffs", "32, 64, 128"});
  EXPECT_NE(cliffs.find("? "), std::string::npos) << cliffs;
  EXPECT_NE(cliffs.find("conf 0.40"), std::string::npos) << cliffs;
  EXPECT_FALSE(line_with(s, {"?", "confidence below 0.5"}).empty()) << s;

  Results confident = sample_results();
  for (auto& f : confident.findings) f.confidence = 0.9;
  EXPECT_EQ(format_summary(confident).find("confidence below"), std::string::npos);
}

TEST(FormatSummary, GroupsInOrder) {
  const std::string s = format_summary(sample_results());
  const size_t memory = position_of(s, "Memory hierarchy");
  const size_t texture = position_of(s, "Local memory and texture");
  const size_t compute = position_of(s, "Compute\n");
  const size_t exec = position_of(s, "Execution");
  const size_t host = position_of(s, "Host and system");
  const size_t device = position_of(s, "Device\n");
  const size_t other = position_of(s, "Other");
  EXPECT_LT(memory, texture);
  EXPECT_LT(texture, compute);
  EXPECT_LT(compute, exec);
  EXPECT_LT(exec, host);
  EXPECT_LT(host, device);
  EXPECT_LT(device, other);
  EXPECT_LT(position_of(s, "fp32 fma throughput"), exec);
  EXPECT_GT(position_of(s, "zero copy"), host);
  EXPECT_FALSE(line_with(s, {"line size", "128 B", "conf 0.60"}).empty()) << s;
  EXPECT_FALSE(line_with(s, {"cache levels", "2"}).empty()) << s;
  EXPECT_FALSE(line_with(s, {"texture shares L1", "yes"}).empty()) << s;
}

TEST(FormatSummary, NotesIndentedUnderTheirFinding) {
  const std::vector<std::string> lines = lines_of(format_summary(sample_results()));
  const auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("texture shares L1") != std::string::npos;
  });
  ASSERT_NE(at, lines.end());
  ASSERT_NE(at + 1, lines.end());
  EXPECT_EQ((at + 1)->rfind("      texture and load/store", 0), 0u) << *(at + 1);

  const std::string s = format_summary(sample_results());
  EXPECT_FALSE(line_with(s, {"L2 capacity: the knee is soft"}).empty()) << s;
}

TEST(FormatSummary, SkippedProbesWithReasons) {
  const std::string s = format_summary(sample_results());
  EXPECT_LT(position_of(s, "Other"), position_of(s, "Not measured"));
  EXPECT_FALSE(line_with(s, {"texture", "unsupported: the device has no image support"}).empty());
  EXPECT_FALSE(line_with(s, {"icache", "build failure: kernel too large"}).empty());
  EXPECT_EQ(s.find("full build log follows"), std::string::npos);
}

TEST(FormatSummary, ColourOnlyWhenAsked) {
  EXPECT_EQ(format_summary(sample_results(), {.color = false}).find('\x1b'), std::string::npos);
  EXPECT_NE(format_summary(sample_results(), {.color = true}).find("\x1b["), std::string::npos);
}

TEST(FormatSummary, FitsInAHundredColumns) {
  Results r = sample_results();
  r.skipped.push_back({"scheduling", std::string(300, 'x')});
  r.findings[4].note = std::string(50, 'a') + " " + std::string(50, 'b') + " " + "end";
  for (const auto& line : lines_of(format_summary(r))) EXPECT_LE(line.size(), 100u) << line;
}

TEST(FormatSummary, NoFindings) {
  Results r;
  r.device.name = "Empty";
  const std::string s = format_summary(r);
  EXPECT_NE(s.find("No findings."), std::string::npos) << s;
  EXPECT_EQ(s.find("Not measured"), std::string::npos) << s;
}

// A ping-pong whose players never took turns is recorded in its series' meta,
// not as a skipped probe; the spec sheet says so, with the reason.
TEST(FormatSummary, UnmeasurableExperimentsWithReasons) {
  Results r = sample_results();
  Series s;
  s.id = "atomics.ping_pong.global";
  s.probe = "atomics";
  s.meta["not_measurable"]["32"] = "no forward progress between the players: a player gave up";
  r.series.push_back(s);
  const std::string text = format_summary(r);
  EXPECT_FALSE(line_with(text, {"atomics.ping_pong.global (32-bit)", "no forward progress"}).empty()) << text;
}

TEST(FormatSummary, OpensWithTheBlockDiagram) {
  const std::string s = format_summary(sample_results());
  EXPECT_LT(position_of(s, "68 compute units, each"), position_of(s, "Memory hierarchy")) << s;
}

}  // namespace
}  // namespace gpuscope
