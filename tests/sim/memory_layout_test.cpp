// Recovery tests of the memory-layout probes on the sim (issue 7): geometry
// (fetch unit, line, sharing), tlb (reach, miss penalty) and coalescing
// (segment, stride ratios, saturating work-group size) run end to end on
// every preset and on a sectored description of our own (NVIDIA-like: 128 B
// lines filled in 32 B sectors), and the analysis must recover what the
// description put in. The expectations are read from the description by
// its own meaning (a sector is what a miss fetches, a per-core level is
// private), not from the families' code.
#include "analysis/cache_geometry.hpp"
#include "analysis/coalescing.hpp"
#include "analysis/tlb.hpp"
#include "backends/sim/cache_model.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>
#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <variant>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

const std::vector<std::string> kConfigs = {"mali-g52",   "adreno-530", "adreno-615",
                                           "adreno-320", "adreno-420", "sectored"};

// 4 cores with a private 128 KiB L1 and a shared 1 MiB L2, both with 128 B
// lines filled in 32 B sectors, and a 512-entry TLB of 64 KiB pages (32 MiB
// reach, inside the tlb probe's 64 MiB sweep). Buffers are capped at 80 MiB
// so that the chases stay small.
nlohmann::json sectored_description() {
  return nlohmann::json::parse(R"({
    "name": "sectored",
    "core": {"shader_cores": 4, "units_per_core": 4, "lanes_per_unit": 32, "wave_width": 32,
             "waves_per_unit": 16, "register_file_bytes_per_unit": 65536, "register_alloc_granularity": 8,
             "max_registers_per_item": 255, "clock_mhz": 1500, "workgroups_per_core": 8,
             "max_work_group_size": 1024},
    "memory": {
      "caches": [
        {"name": "L1", "capacity_bytes": 131072, "line_bytes": 128, "sector_bytes": 32, "associativity": 4,
         "replacement": "lru", "hit_latency_ns": 25, "bytes_per_clock": 64, "path": "both", "per_core": true},
        {"name": "L2", "capacity_bytes": 1048576, "line_bytes": 128, "sector_bytes": 32, "associativity": 16,
         "replacement": "lru", "hit_latency_ns": 150, "bytes_per_clock": 128, "path": "both"}],
      "tlb": {"entries": 512, "page_bytes": 65536, "miss_penalty_ns": 200},
      "dram": {"latency_ns": 500, "bandwidth_gbps": 100},
      "global_mem_bytes": 4294967296, "max_alloc_bytes": 83886080}
  })");
}

SimConfig config_of(const std::string& name) {
  return name == "sectored" ? parse_sim_config(sectored_description(), name) : test::sim_config_named(name);
}

std::vector<Series> run_probe(SimDevice& dev, std::vector<Series> (*probe)(ProbeContext&), bool quick) {
  ProbeOptions opts;
  opts.quick = quick;
  ProbeContext ctx{dev, opts, 30.0};
  return probe(ctx);
}

const Series* series(const std::vector<Series>& ss, const std::string& id) {
  for (const auto& s : ss)
    if (s.id == id) return &s;
  return nullptr;
}

const Finding* finding(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

// A sectored level allocates the line on a miss but fills only the sector
// accessed: another sector of that line misses it and is served by the next
// level, which (with sectors of its own the same size) misses too, until a
// load of a filled sector hits.
TEST(SimSectors, MissingSectorOfAPresentLineGoesToTheNextLevel) {
  const SimConfig c = config_of("sectored");
  MemoryModel m(c, 1);
  const uint64_t a = uint64_t{1} << 30;
  const double dram =
      c.dram_latency_ns + c.tlb.miss_penalty_ns;  // the first touch of the page misses the TLB
  EXPECT_DOUBLE_EQ(m.access(a, CachePath::load_store), dram);
  EXPECT_DOUBLE_EQ(m.access(a + 8, CachePath::load_store), c.caches[0].hit_latency_ns);  // same 32 B sector
  EXPECT_DOUBLE_EQ(m.access(a + 32, CachePath::load_store), c.dram_latency_ns);  // same line, new sector
  EXPECT_EQ(m.last_level(), -1);
  EXPECT_DOUBLE_EQ(m.access(a + 40, CachePath::load_store), c.caches[0].hit_latency_ns);
  // The L1 of another core has none of it; the shared L2 has both sectors.
  EXPECT_DOUBLE_EQ(m.access(a + 32, CachePath::load_store, 1), c.caches[1].hit_latency_ns);
  EXPECT_DOUBLE_EQ(m.access(a + 64, CachePath::load_store, 1), c.dram_latency_ns);
}

class SimMemlayoutRecovery : public testing::TestWithParam<std::string> {};

// Fetch unit per level (= sector_bytes), line (= the first load-path
// level's line_bytes) and sharing (= !per_core), exactly. The analysis
// numbers the levels its chases see on the load path: level k is the k-th
// configured level on that path (texture-only caches are not on it); a
// plateau past the last one is DRAM and is not checked. Quick sweeps for the
// presets (their 64 B lines sit inside the quick strides 32..128); the full
// sweep (strides to 512 B) for the 128 B lines of the sectored description.
TEST_P(SimMemlayoutRecovery, GeometryFetchLineAndSharing) {
  const SimConfig c = config_of(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto ss = run_probe(dev, run_geometry_probe, GetParam() != "sectored");
  std::vector<const Series*> lines;
  for (const auto& s : ss)
    if (s.id.rfind("geometry.line_", 0) == 0) lines.push_back(&s);
  const Series* lone = series(ss, "geometry.shared_1");
  const Series* all = series(ss, fmt::format("geometry.shared_{}", c.core.shader_cores));
  ASSERT_TRUE(lone && all);
  const auto fs =
      analysis::geometry_findings(series(ss, "geometry.pairs_near"), series(ss, "geometry.pairs_mid"),
                                  series(ss, "geometry.pairs_far"), lines, lone, all, 0);
  const auto levels = c.path_levels(CachePath::load_store);

  const Finding* line = finding(fs, "memory.line_bytes");
  ASSERT_NE(line, nullptr);
  std::printf("geometry %s: line_bytes configured %u, recovered %.0f\n", c.id_name.c_str(),
              levels.front()->line_bytes, number(*line));
  EXPECT_EQ(number(*line), levels.front()->line_bytes) << line->note;

  // Near pairs miss the first level; far pairs miss every level, so their
  // step is the last level's fetch from DRAM (reported as memory.L2 when the
  // number of levels is not given).
  const struct {
    std::string id;
    const CacheLevelConfig* level;
  } fetches[] = {{"memory.L1.fetch_bytes", levels.front()}, {"memory.L2.fetch_bytes", levels.back()}};
  for (const auto& f : fetches) {
    const Finding* got = finding(fs, f.id);
    ASSERT_NE(got, nullptr) << f.id;
    std::printf("  %s: configured %u (%s sector), recovered %.0f\n", f.id.c_str(), f.level->sector_bytes,
                f.level->name.c_str(), number(*got));
    EXPECT_EQ(number(*got), f.level->sector_bytes) << f.id;
  }

  for (size_t k = 0; k < levels.size(); ++k) {
    const std::string id = fmt::format("memory.L{}.shared_by_cus", k + 1);
    const Finding* got = finding(fs, id);
    ASSERT_NE(got, nullptr) << id;
    std::printf("  %s (%s): configured %s, recovered %s\n", id.c_str(), levels[k]->name.c_str(),
                levels[k]->per_core ? "private" : "shared",
                std::get<bool>(got->value) ? "shared" : "private");
    EXPECT_EQ(std::get<bool>(got->value), !levels[k]->per_core) << id;
  }
}

// Three levels on the load path: an L1 filled in 32 B sectors, an L2 in 64 B
// sectors and a 4 MiB L3 in 128 B lines. The sharing sweep's lone chase (8
// MiB a group) sees the L3 end, so the probe runs mid pairs (past the L2,
// inside the L3) and they tell the L2's 64 B apart from the L1's 32 and the
// L3's 128, which the far pairs read.
TEST(SimMemlayout, MidPairsTellTheSecondOfThreeLevelsFill) {
  nlohmann::json d = sectored_description();
  d["name"] = "three-levels";
  d["core"]["shader_cores"] = 2;
  auto& caches = d["memory"]["caches"];
  caches[0]["capacity_bytes"] = 16384;
  caches[1] = {{"name", "L2"},         {"capacity_bytes", 262144}, {"line_bytes", 128},
               {"sector_bytes", 64},   {"associativity", 16},      {"replacement", "lru"},
               {"hit_latency_ns", 90}, {"bytes_per_clock", 128},   {"path", "both"}};
  caches.push_back({{"name", "L3"},
                    {"capacity_bytes", 4194304},
                    {"line_bytes", 128},
                    {"associativity", 16},
                    {"replacement", "lru"},
                    {"hit_latency_ns", 200},
                    {"bytes_per_clock", 64},
                    {"path", "both"}});
  d["memory"]["max_alloc_bytes"] = 134217728;
  const SimConfig c = parse_sim_config(d, "three-levels");
  SimDevice dev(c, "sim:three-levels");
  const auto ss = run_probe(dev, run_geometry_probe, false);
  const Series* mid = series(ss, "geometry.pairs_mid");
  ASSERT_NE(mid, nullptr);
  const double footprint = mid->meta["footprint_bytes"].get<double>();
  // Its anchors' lines, a quarter of it, fall in a quarter of the sets.
  EXPECT_GE(footprint, 4 * 262144.0);  // they overrun the L2 4x
  EXPECT_LE(footprint, 4194304.0);     // and fit the L3
  const auto fs = analysis::geometry_findings(series(ss, "geometry.pairs_near"), mid,
                                              series(ss, "geometry.pairs_far"), {}, nullptr, nullptr, 3);
  for (const auto& [id, unit] : {std::pair<std::string, double>{"memory.L1.fetch_bytes", 32},
                                 {"memory.L2.fetch_bytes", 64},
                                 {"memory.L3.fetch_bytes", 128}}) {
    const Finding* f = finding(fs, id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(number(*f), unit) << id << ": " << f->note;
  }
}

// TLB reach within 10% and miss penalty within 5% where the step is inside
// the sweep. The probe's GPU strides are 4 KiB, 64 KiB and 2 MiB: the
// smallest is no larger than any GPU's page, so its step falls at entries x
// page (Mali's 4 KiB pages: 8 MiB). Where that footprint is not below the
// sweep's last one, the reach is only a lower bound and no penalty is
// reported. No TLB: no step at all. The
// full sweep (2 points per octave): at one per octave the Adreno 615's step
// (32 -> 64 MiB) falls where its control overflows the L2 (1024 -> 2048
// lines), and the analysis leaves out points where the control changes
// level.
TEST_P(SimMemlayoutRecovery, TlbReachAndPenalty) {
  const SimConfig c = config_of(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto ss = run_probe(dev, run_tlb_probe, false);
  const Series* control = series(ss, "tlb.control");
  ASSERT_NE(control, nullptr);
  std::vector<const Series*> strided;
  for (const auto& s : ss)
    if (s.id.rfind("tlb.stride_", 0) == 0) strided.push_back(&s);
  const auto fs = analysis::tlb_findings(*control, strided);
  const Finding* reach = finding(fs, "memory.tlb.reach_bytes");
  const Finding* penalty = finding(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_NE(reach, nullptr);
  const Series* smallest = series(ss, "tlb.stride_4096");
  ASSERT_TRUE(smallest && !smallest->points.empty());
  const double swept = smallest->points.back().x;
  const double step = static_cast<double>(c.tlb.entries) * std::max<double>(c.tlb.page_bytes, 4096.0);
  if (c.tlb.entries == 0 || step >= swept) {
    std::printf(
        "tlb %s: step expected at %.0f MiB (entries %u x max(page %llu, stride 4 KiB)), past the "
        "sweep's %.0f MiB; recovered lower bound %.0f MiB, penalty %s\n",
        c.id_name.c_str(), step / 1048576, c.tlb.entries, static_cast<unsigned long long>(c.tlb.page_bytes),
        swept / 1048576, number(*reach) / 1048576, penalty ? "reported" : "none");
    EXPECT_FALSE(reach->high.has_value());
    EXPECT_EQ(penalty, nullptr);
    return;
  }
  ASSERT_NE(penalty, nullptr);
  std::printf(
      "tlb %s: reach configured %.1f MiB (step at %.1f MiB), recovered %.1f MiB; miss penalty "
      "configured %.1f ns, recovered %.1f ns\n",
      c.id_name.c_str(), static_cast<double>(c.tlb.reach_bytes()) / 1048576, step / 1048576,
      number(*reach) / 1048576, c.tlb.miss_penalty_ns, number(*penalty));
  EXPECT_NEAR(number(*reach) / step, 1.0, 0.10);
  if (c.tlb.page_bytes >= 4096) EXPECT_NEAR(number(*reach) / c.tlb.reach_bytes(), 1.0, 0.10);
  EXPECT_NEAR(number(*penalty) / c.tlb.miss_penalty_ns, 1.0, 0.05);
}

// A device whose largest allocation is a power of two (the sim's drawn
// GPUs: 512 MiB) gives the tlb sweep all of it: the rig's 4 KiB of slack
// over the power of two, which would take the buffer past that, is left
// out there, where it halved the sweep to 256 MiB. A larger allocation
// keeps the slack, and the sweep is no longer.
TEST(SimMemlayout, APowerOfTwoAllocationIsSweptWhole) {
  for (const uint64_t max_alloc : {uint64_t{512} << 20, (uint64_t{512} << 20) + 4096}) {
    SCOPED_TRACE(max_alloc);
    nlohmann::json d = sectored_description();
    d["memory"]["max_alloc_bytes"] = max_alloc;
    const SimConfig c = parse_sim_config(d, "sectored");
    SimDevice dev(c, "sim:sectored");
    const auto ss = run_probe(dev, run_tlb_probe, true);
    const Series* s = series(ss, "tlb.stride_2097152");
    ASSERT_TRUE(s && !s->points.empty());
    EXPECT_EQ(s->meta["buffer_bytes"].get<double>(), 512.0 * 1048576);
    EXPECT_EQ(s->points.back().x, 512.0 * 1048576);
  }
}

namespace {

// The segment model: a wave of w 4-byte loads at stride m elements touches
// max(1, min(w, 4 w m / S)) segments of S bytes (aligned, power-of-two m),
// its stores max(1, 4 w / S); a streaming copy moves those segments, so the
// useful throughput at stride m over that at m = 1 is the ratio of the
// segments moved per wave.
double segment_ratio(double wave, double seg, double m) {
  const auto reads = [&](double mm) { return std::max(1.0, std::min(wave, 4 * wave * mm / seg)); };
  const double writes = std::max(1.0, 4 * wave / seg);
  return (reads(1) + writes) / (reads(m) + writes);
}

// Copy throughput (8 B counted per element) at work-group size wg by
// Little's law against DRAM: work-items resident (whole groups, as many per
// core as the group limit and the wave slots allow) x 8 B per DRAM latency,
// capped by DRAM bandwidth x the useful fraction of the segments moved.
double copy_gbps(const SimConfig& c, double wg) {
  const double wave = c.core.wave_width, seg = c.path_levels(CachePath::load_store).front()->sector_bytes;
  const double w = std::min(wave, wg);
  const double per_wave = 2 * std::max(1.0, 4 * w / seg) * seg;  // bytes moved per wave, load and store
  const double waves_per_group = std::ceil(wg / wave);
  const double groups = std::max(
      1.0, std::min<double>(c.core.workgroups_per_core,
                            std::floor(c.core.units_per_core * c.core.waves_per_unit / waves_per_group)));
  const double resident = groups * wg * c.core.shader_cores;
  return std::min(c.dram_bandwidth_gbps * 8 * w / per_wave, resident * 8 / c.dram_latency_ns);
}

}  // namespace

// Segment exactly (= the first load-path level's sector), the stride ratios
// within 6% of the segment model's, and the saturating work-group size equal
// to the smallest power of two reaching 90% of the best throughput by
// Little's law (the analysis's own definition of saturation). The 004
// paper's Adreno 320 saturates at 64, its 420 at 128: printed beside.
TEST_P(SimMemlayoutRecovery, CoalescingSegmentStridesAndSaturation) {
  const SimConfig c = config_of(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const auto ss = run_probe(dev, run_coalescing_probe, true);
  const Series* wg = series(ss, "coalescing.workgroup");
  const Series* str = series(ss, "coalescing.stride");
  ASSERT_TRUE(wg && str);
  const auto fs = analysis::coalescing_findings(wg, series(ss, "coalescing.offset"), str);
  const double seg = c.path_levels(CachePath::load_store).front()->sector_bytes;

  const Finding* got_seg = finding(fs, "memory.coalescing.segment_bytes");
  ASSERT_NE(got_seg, nullptr);
  std::printf("coalescing %s: segment_bytes configured %.0f, recovered %.0f\n", c.id_name.c_str(), seg,
              number(*got_seg));
  EXPECT_EQ(number(*got_seg), seg);

  for (int m : {2, 4, 8, 16, 32, 64}) {
    const Finding* got = finding(fs, fmt::format("memory.coalescing.stride_{}_ratio", m));
    if (!got) continue;
    const double want = segment_ratio(c.core.wave_width, seg, m);
    std::printf("  stride_%d_ratio: segment model %.3f, recovered %.3f\n", m, want, number(*got));
    EXPECT_NEAR(number(*got) / want, 1.0, 0.06) << m;
  }

  const double max_wg =
      std::min<double>(c.core.max_work_group_size, static_cast<double>(wg->points.back().x));
  double best = 0;
  for (double w = 1; w <= max_wg; w *= 2) best = std::max(best, copy_gbps(c, w));
  double want = 0;
  for (double w = 1; w <= max_wg && want == 0; w *= 2)
    if (copy_gbps(c, w) >= 0.9 * best) want = w;
  const Finding* sat = finding(fs, "memory.coalescing.saturating_workgroup_size");
  ASSERT_NE(sat, nullptr);
  const char* paper = c.id_name == "adreno-320"   ? " (Adreno 320/420 paper: 64)"
                      : c.id_name == "adreno-420" ? " (Adreno 320/420 paper: 128)"
                                                  : "";
  std::printf("  saturating_workgroup_size: Little's law %.0f%s, recovered %.0f\n", want, paper,
              number(*sat));
  EXPECT_EQ(number(*sat), want);
}

INSTANTIATE_TEST_SUITE_P(Sim, SimMemlayoutRecovery, testing::ValuesIn(kConfigs), test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, SimMemlayoutRecovery, testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);

// An exclusive L2 holds only what the L1 evicted: a line that hits there
// moves to the L1 and leaves the L2, and a dependent walk over a cycle of
// lines keeps hitting up to the two capacities together (an inclusive L2
// of the same size would lose every line of such a cycle past its own
// capacity under LRU).
TEST(SimExclusive, VictimLevelHoldsWhatTheFirstEvicted) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "exclusive",
    "core": {"shader_cores": 1, "units_per_core": 1, "lanes_per_unit": 16, "wave_width": 16,
             "waves_per_unit": 16, "register_file_bytes_per_unit": 32768, "register_alloc_granularity": 4,
             "max_registers_per_item": 64, "clock_mhz": 500, "workgroups_per_core": 2, "max_work_group_size": 256},
    "memory": {
      "caches": [
        {"name": "L1", "capacity_bytes": 4096, "line_bytes": 64, "associativity": 64, "replacement": "lru",
         "hit_latency_ns": 10, "bytes_per_clock": 16, "path": "both", "per_core": true},
        {"name": "L2", "capacity_bytes": 8192, "line_bytes": 64, "associativity": 128, "replacement": "lru",
         "hit_latency_ns": 50, "bytes_per_clock": 32, "path": "both", "inclusion": "exclusive"}],
      "dram": {"latency_ns": 200, "bandwidth_gbps": 10},
      "global_mem_bytes": 1073741824, "max_alloc_bytes": 67108864}
  })");
  const SimConfig c = parse_sim_config(j, "exclusive");
  ASSERT_TRUE(c.caches[1].exclusive);
  MemoryModel m(c, 1);
  const uint64_t base = uint64_t{1} << 30;
  // 160 lines (10 KiB): more than either level, less than both (12 KiB).
  for (int lap = 0; lap < 3; ++lap)
    for (uint64_t i = 0; i < 160; ++i) m.access(base + i * 64, CachePath::load_store);
  int dram = 0, l2 = 0;
  for (uint64_t i = 0; i < 160; ++i) {
    m.access(base + i * 64, CachePath::load_store);
    if (m.last_level() == -1) ++dram;
    if (m.last_level() == 1) ++l2;
  }
  EXPECT_EQ(dram, 0);
  EXPECT_EQ(l2, 160);  // a cyclic walk past the L1 under LRU: every line from the L2
  // The same walk with the L2 inclusive misses both levels on every line.
  j["memory"]["caches"][1].erase("inclusion");
  const SimConfig inc = parse_sim_config(j, "inclusive");
  MemoryModel mi(inc, 1);
  for (int lap = 0; lap < 3; ++lap)
    for (uint64_t i = 0; i < 160; ++i) mi.access(base + i * 64, CachePath::load_store);
  mi.access(base, CachePath::load_store);
  EXPECT_EQ(mi.last_level(), -1);
  // A first level cannot be exclusive.
  j["memory"]["caches"][0]["inclusion"] = "exclusive";
  EXPECT_THROW(parse_sim_config(j, "bad"), UsageError);
}
