// The sim backend: strict device descriptions, kernel semantics, and the
// recovery tests: the latency probe runs on simulated GPUs (the seeds'
// presets and randomly drawn ones, fixed seeds) and the cache hierarchy
// inference must recover what the description put in.
#include "analysis/cache_hierarchy.hpp"
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "report/results_json.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

nlohmann::json minimal_description() {
  return nlohmann::json::parse(R"({
    "name": "tiny",
    "core": {"shader_cores": 2, "units_per_core": 1, "lanes_per_unit": 16, "wave_width": 16,
             "waves_per_unit": 16, "register_file_bytes_per_unit": 32768, "register_alloc_granularity": 4,
             "max_registers_per_item": 64, "clock_mhz": 500, "workgroups_per_core": 2, "max_work_group_size": 256},
    "memory": {
      "caches": [
        {"name": "L1", "capacity_bytes": 16384, "line_bytes": 64, "associativity": 4, "replacement": "lru",
         "hit_latency_ns": 40, "bytes_per_clock": 16, "path": "both", "per_core": true},
        {"name": "L2", "capacity_bytes": 262144, "line_bytes": 64, "associativity": 8, "replacement": "lru",
         "hit_latency_ns": 120, "bytes_per_clock": 32, "path": "both"}],
      "dram": {"latency_ns": 400, "bandwidth_gbps": 10},
      "global_mem_bytes": 1073741824, "max_alloc_bytes": 67108864}
  })");
}

std::string rejection(const nlohmann::json& j) {
  try {
    parse_sim_config(j, "test");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SimConfig, PresetsParseAndAreListed) {
  ASSERT_EQ(sim_presets().size(), 9u);
  for (const auto& p : sim_presets()) {
    const SimConfig c = load_sim_preset(p.name);
    EXPECT_FALSE(c.name.empty());
    EXPECT_GT(c.dram_latency_ns, 0);
  }
  const auto r = test::run_gpuscope("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* id :
       {"sim:mali-g52", "sim:adreno-530", "sim:adreno-615", "sim:adreno-320", "sim:adreno-420", "sim:adreno-730",
        "sim:adreno-740", "sim:mali-g710", "sim:immortalis-g715"})
    EXPECT_NE(r.output.find(id), std::string::npos) << id << "\n" << r.output;
}

TEST(SimConfig, RejectsMalformedDescriptionsNamingTheField) {
  EXPECT_EQ(rejection(minimal_description()), "");
  struct Case {
    std::string what, json_pointer;
    nlohmann::json value;
    std::string expect;  // in the message
  };
  const std::vector<Case> cases = {
      {"negative size", "/memory/caches/0/capacity_bytes", -16384, "memory.caches[0].capacity_bytes"},
      {"level smaller than the one before", "/memory/caches/1/capacity_bytes", 8192,
       "memory.caches[1].capacity_bytes"},
      {"level faster than the one before", "/memory/caches/1/hit_latency_ns", 20,
       "memory.caches[1].hit_latency_ns"},
      {"unknown key", "/memory/caches/0/size", 1, "memory.caches[0].size: unknown key"},
      {"unknown top-level key", "/colour", "red", "colour: unknown key"},
      {"wrong type", "/core/clock_mhz", "fast", "core.clock_mhz"},
      {"line not a power of two", "/memory/caches/0/line_bytes", 48, "memory.caches[0].line_bytes"},
      {"bad replacement", "/memory/caches/0/replacement", "fifo", "memory.caches[0].replacement"},
      {"dram faster than L2", "/memory/dram/latency_ns", 100, "memory.dram.latency_ns"},
      {"bad basis", "/core/clock_mhz", nlohmann::json{{"value", 500}, {"basis", "guess"}},
       "core.clock_mhz.basis"},
      {"capacity not whole sets", "/memory/caches/0/capacity_bytes", 16000,
       "memory.caches[0].capacity_bytes"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = minimal_description();
    j[nlohmann::json::json_pointer(c.json_pointer)] = c.value;
    const std::string msg = rejection(j);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": got '" << msg << "'";
  }
  nlohmann::json missing = minimal_description();
  missing["memory"].erase("dram");
  EXPECT_NE(rejection(missing).find("memory.dram: missing"), std::string::npos);
}

// A rate under a name the compute models never look up would be ignored.
TEST(SimConfig, RateOpsAreOnlyTheOpsTheSimKnowsAndTheMessageListsThem) {
  nlohmann::json j = minimal_description();
  j["rates"] = {{"ops", {{{"type", "float"}, {"op", "fma"}, {"per_clock_per_core", 64}}}}};
  EXPECT_EQ(rejection(j), "");
  j["rates"]["ops"][0]["op"] = "<b>teleport</b>";
  const std::string msg = rejection(j);
  EXPECT_NE(msg.find("rates.ops[0].op: '<b>teleport</b>' is not one of add, mul, fma, mad"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("native_sin"), std::string::npos) << msg;
}

// launch.endless: kernels that never end, for the launch bound's tests.
TEST(SimConfig, EndlessKernelsAreNamedFamilySlashEntry) {
  nlohmann::json j = minimal_description();
  j["launch"] = {{"endless", {"sustain/fma_load"}}};
  EXPECT_EQ(rejection(j), "");
  EXPECT_EQ(parse_sim_config(j, "test").launch.endless, std::vector<std::string>{"sustain/fma_load"});
  j["launch"]["endless"] = {"sustain"};
  EXPECT_NE(rejection(j).find("launch.endless[0]: expected a kernel name \"family/entry\""), std::string::npos)
      << rejection(j);
  j["launch"]["endless"] = "sustain/fma_load";
  EXPECT_NE(rejection(j).find("launch.endless: expected an array"), std::string::npos) << rejection(j);
}

// A launch that never ends is cut at its bound (LaunchBound): the probe is
// recorded as failed with the reason, the run goes on to the next probe and
// ends with exit code 1. A modelled device comes back, so it is not lost.
TEST(SimConfig, EndlessLaunchIsCutAtItsBoundAndTheRunGoesOn) {
  const auto dir = test::fresh_temp_dir("sim_endless");
  nlohmann::json j;
  std::ifstream(std::string(GPUSCOPE_SOURCE_DIR) + "/src/backends/sim/presets/mali-g52.json") >> j;
  j["launch"]["endless"] = {"sustain/fma_load"};
  std::ofstream(dir / "endless.json") << j.dump();
  const auto r = test::run_gpuscope("run --quiet --probes sustain,launch --max-launch-ms 50 --device sim:" +
                                        (dir / "endless.json").string() + " --out " + (dir / "out").string(),
                                    "timeout 120");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const Results res = read_results_file((dir / "out" / "results.json").string());
  ASSERT_EQ(res.skipped.size(), 1u) << r.output;
  EXPECT_EQ(res.skipped[0].probe, "sustain");
  EXPECT_NE(res.skipped[0].reason.find("a launch of sustain/fma_load"), std::string::npos) << res.skipped[0].reason;
  EXPECT_NE(res.skipped[0].reason.find("ran past its bound of 5000 ms"), std::string::npos) << res.skipped[0].reason;
  EXPECT_NE(res.skipped[0].reason.find("launch.endless"), std::string::npos) << res.skipped[0].reason;
  const bool launch_ran = std::any_of(res.series.begin(), res.series.end(),
                                      [](const Series& s) { return s.probe == "launch"; });
  EXPECT_TRUE(launch_ran) << r.output;
}

TEST(SimConfig, CommandLineLoadsAFileAndRejectsABadOneWithExit2) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuscope_sim_cli";
  std::filesystem::create_directories(dir);
  nlohmann::json bad = minimal_description();
  bad["memory"]["caches"][1]["capacity_bytes"] = 4096;
  std::ofstream((dir / "bad.json").string()) << bad.dump();
  const auto r = test::run_gpuscope(
      fmt::format("run --quick --probes latency --device sim:{}", (dir / "bad.json").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("memory.caches[1].capacity_bytes"), std::string::npos) << r.output;
}

// What the model cannot serve is refused with the bound in the message:
// the model keeps every cache line in host memory.
TEST(SimConfig, RefusesWhatTheModelCannotRunStatingTheBound) {
  nlohmann::json huge = minimal_description();
  huge["memory"]["caches"][1]["capacity_bytes"] = uint64_t{1} << 40;
  EXPECT_NE(rejection(huge).find("memory.caches[1].capacity_bytes: 1099511627776 is outside [1, 1073741824]"),
            std::string::npos)
      << rejection(huge);

  nlohmann::json lines = minimal_description();
  lines["core"]["shader_cores"] = 4096;
  lines["memory"]["caches"][0]["capacity_bytes"] = 1 << 20;  // per core: 2^28 lines in all
  lines["memory"]["caches"][1]["capacity_bytes"] = 1 << 26;
  EXPECT_NE(rejection(lines).find("the sim models at most 8388608 (about 192 MiB of host memory)"),
            std::string::npos)
      << rejection(lines);

  nlohmann::json levels = minimal_description();
  auto& caches = levels["memory"]["caches"];
  for (int i = 2; i < 9; ++i) {
    nlohmann::json l = caches[1];
    l["capacity_bytes"] = 262144ull << (i - 1);
    l["hit_latency_ns"] = 120 + 10 * i;
    caches.push_back(l);
  }
  levels["memory"]["dram"]["latency_ns"] = 1000;
  EXPECT_NE(rejection(levels).find("memory.caches: 9 levels; the sim models at most 8"), std::string::npos)
      << rejection(levels);
  caches.erase(caches.size() - 1);
  EXPECT_EQ(rejection(levels), "");

  nlohmann::json tlb = minimal_description();
  tlb["memory"]["tlb"] = {{"entries", 1 << 21}, {"page_bytes", 4096}, {"miss_penalty_ns", 50}};
  EXPECT_NE(rejection(tlb).find("memory.tlb.entries: 2097152 is outside [1, 1048576]"), std::string::npos)
      << rejection(tlb);
}

TEST(SimConfig, EmptyKeysAndHugeNumbersAreNamedPlainly) {
  nlohmann::json empty = minimal_description();
  empty["memory"][""] = 1;
  EXPECT_NE(rejection(empty).find("memory[\"\"]: an empty key is not a field"), std::string::npos)
      << rejection(empty);

  std::string text = minimal_description().dump(2);
  text.replace(text.find("262144"), 6, "1e400");
  std::string msg;
  try {
    parse_sim_config_text(text, "big.json");
  } catch (const UsageError& e) {
    msg = e.what();
  }
  EXPECT_NE(
      msg.find("sim description 'big.json' is not valid JSON: memory.caches[1].capacity_bytes: the number "
               "1e400 is too large (line "),
      std::string::npos)
      << msg;
}

TEST(SimConfig, CommandLineTriesAPathThatDoesNotEndInJson) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuscope_sim_path";
  std::filesystem::create_directories(dir);
  nlohmann::json bad = minimal_description();
  bad["memory"]["caches"][1]["capacity_bytes"] = 4096;
  std::ofstream((dir / "tiny.desc").string()) << bad.dump();
  const auto r = test::run_gpuscope(fmt::format("run --quick --probes latency --device sim:{} --out {}",
                                                (dir / "tiny.desc").string(), (dir / "out").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("memory.caches[1].capacity_bytes"), std::string::npos) << r.output;
  const auto missing = test::run_gpuscope("run --device sim:no-such-gpu --out " + (dir / "out").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot open sim description 'no-such-gpu'"), std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("nor is it a sim preset: adreno-320"), std::string::npos) << missing.output;
}

TEST(SimDevice, UnknownKernelIsUnsupportedNamingIt) {
  SimDevice dev(parse_sim_config(minimal_description(), "tiny"), "sim:tiny");
  try {
    dev.kernel({"nosuch", "frob", {}});
    FAIL() << "no exception";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("frob"), std::string::npos);
  }
}

TEST(SimDevice, ChaseFollowsTheLinkedCycleAndBuffersAreSparse) {
  SimDevice dev(parse_sim_config(minimal_description(), "tiny"), "sim:tiny");
  auto slots = dev.create_buffer(64 << 20);
  auto next = dev.create_buffer(4 * 4);
  auto end = dev.create_buffer(4);
  const std::vector<uint32_t> cycle = {2, 0, 3, 1};  // 0 -> 2 -> 3 -> 1 -> 0
  dev.write_values<uint32_t>(*next, cycle);
  Kernel& link = dev.kernel({"latency", "link", {{"addr_bits", 64}}});
  Kernel& chase = dev.kernel({"latency", "chase", {{"addr_bits", 64}}});
  const KernelArg la[] = {slots.get(), next.get(), 8u, 4u};
  dev.launch(link, Range::d1(64), Range::d1(64), la);
  // The slots hold real device addresses: slot 0 names slot 2.
  const auto* sb = dynamic_cast<SimBuffer*>(slots.get());
  EXPECT_EQ(sb->load<uint64_t>(0), sb->base_address() + 2 * 64);
  const KernelArg ca[] = {slots.get(), 0u, 8u, 1u, end.get()};  // 16 hops: 16 % 4 == 0
  const double ns = dev.launch(chase, Range::d1(1), Range::d1(1), ca);
  EXPECT_EQ(dev.read_values<uint32_t>(*end, 1)[0], 0u);
  EXPECT_GT(ns, 0);
  const KernelArg cb[] = {slots.get(), 3u, 8u, 1u, end.get()};
  dev.launch(chase, Range::d1(1), Range::d1(1), cb);
  EXPECT_EQ(dev.read_values<uint32_t>(*end, 1)[0], 3u);
  EXPECT_LE(sb->resident_bytes(), 64u * 1024);  // 64 MiB buffer, one chunk touched
  EXPECT_THROW(dev.create_buffer(size_t{1} << 40), OutOfResources);
}

// The latency probe's warm-up chains (latency.cl's walk): one work-group,
// each work-item from its own start, ends checked against the host's walk of
// a 5-slot cycle (0 -> 2 -> 4 -> 1 -> 3 -> 0); one round is 16 hops, 16 % 5
// == 1, so every chain ends one slot on. A launch of several work-groups is
// not modelled, and says so.
TEST(SimDevice, WalkRunsOneChainPerWorkItemFromItsStart) {
  SimDevice dev(parse_sim_config(minimal_description(), "tiny"), "sim:tiny");
  auto slots = dev.create_buffer(5 * 64);
  auto next = dev.create_buffer(5 * 4);
  auto starts = dev.create_buffer(3 * 4);
  auto ends = dev.create_buffer(3 * 4);
  dev.write_values<uint32_t>(*next, std::vector<uint32_t>{2, 3, 4, 0, 1});
  Kernel& link = dev.kernel({"latency", "link", {{"addr_bits", 64}}});
  Kernel& walk = dev.kernel({"latency", "walk", {{"addr_bits", 64}}});
  const KernelArg la[] = {slots.get(), next.get(), 8u, 5u};
  dev.launch(link, Range::d1(5), Range::d1(5), la);
  dev.write_values<uint32_t>(*starts, std::vector<uint32_t>{0, 4, 3});
  const KernelArg wa[] = {slots.get(), starts.get(), 8u, 1u, ends.get()};
  EXPECT_GT(dev.launch(walk, Range::d1(3), Range::d1(3), wa), 0);
  EXPECT_EQ(dev.read_values<uint32_t>(*ends, 3), (std::vector<uint32_t>{2, 1, 0}));
  const KernelArg wb[] = {slots.get(), starts.get(), 8u, 5u, ends.get()};  // 80 hops: 80 % 5 == 0
  dev.launch(walk, Range::d1(3), Range::d1(3), wb);
  EXPECT_EQ(dev.read_values<uint32_t>(*ends, 3), (std::vector<uint32_t>{0, 4, 3}));
  EXPECT_THROW(dev.launch(walk, Range::d1(2), Range::d1(1), wa), Unsupported);
}

// ---- recovery --------------------------------------------------------------

namespace {

struct Recovery {
  std::string name;
  ExpectedChase truth;
  analysis::Hierarchy found;
  double max_footprint = 0;
  std::string description;
  SimConfig cfg;
};

Recovery run_latency_on(const SimConfig& cfg) {
  SimDevice dev(cfg, "sim:" + cfg.id_name);
  ProbeOptions opts;
  ProbeContext ctx{dev, opts, 30.0};
  const auto series = run_latency_probe(ctx);
  Recovery r;
  r.name = cfg.id_name;
  r.description = cfg.source["memory"].dump();
  r.cfg = cfg;
  r.max_footprint = series.at(0).meta.at("max_footprint_bytes").get<double>();
  r.truth = expected_chase(cfg, r.max_footprint);
  r.found = analysis::infer_cache_hierarchy(series.at(0));
  return r;
}

// Capacities within 10%, latencies within 5%. A TLB step is not a cache: the
// chase sees it as one, where half the loads still translate, which for
// uniformly random pages under LRU is twice the reach; it is only required
// to lie within [reach, 2.5 reach].
void expect_recovered(const Recovery& r) {
  SCOPED_TRACE(r.name);
  const auto& want = r.truth.levels;
  const auto& got = r.found.levels;
  std::string table;
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i)
    table += fmt::format("  L{}: configured {} {:.0f} B {:.1f} ns | found {:.0f} B {:.1f} ns\n", i + 1,
                         i < want.size() ? want[i].label : "-", i < want.size() ? want[i].capacity_bytes : 0,
                         i < want.size() ? want[i].latency_ns : 0, i < got.size() ? got[i].capacity_bytes : 0,
                         i < got.size() ? got[i].latency_ns : 0);
  table += fmt::format(
      "  beyond: configured {:.1f} ns (at the found plateau's middle {:.1f} ns) | found {:.1f} ns\n",
      r.truth.beyond_latency_ns,
      r.found.dram
          ? chase_latency_beyond_caches(r.cfg, std::sqrt(r.found.dram->first_x * r.found.dram->last_x))
          : 0,
      r.found.dram ? r.found.dram->latency_ns : 0);
  std::printf("recovery %s (sweep to %.0f MiB)\n%s", r.name.c_str(), r.max_footprint / (1 << 20),
              table.c_str());
  if (std::getenv("GPUSCOPE_SIM_SHOW")) std::printf("%s\n", r.description.c_str());
  ASSERT_EQ(got.size(), want.size()) << table;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].is_tlb) {
      EXPECT_GE(got[i].capacity_bytes, 0.9 * want[i].capacity_bytes) << table;
      EXPECT_LE(got[i].capacity_bytes, 2.5 * want[i].capacity_bytes) << table;
    } else {
      EXPECT_NEAR(got[i].capacity_bytes / want[i].capacity_bytes, 1.0, 0.10) << "L" << i + 1 << "\n" << table;
    }
    EXPECT_NEAR(got[i].latency_ns / want[i].latency_ns, 1.0, 0.05) << "L" << i + 1 << "\n" << table;
  }
  // Past the caches the truth depends on the footprint when a TLB step is
  // in the sweep (its hit fraction decays as reach / footprint): compared at
  // the middle of the plateau the analysis found.
  ASSERT_TRUE(r.found.dram.has_value()) << table;
  const double mid = std::sqrt(r.found.dram->first_x * r.found.dram->last_x);
  EXPECT_NEAR(r.found.dram->latency_ns / chase_latency_beyond_caches(r.cfg, mid), 1.0, 0.05) << table;
}

// A random but plausible GPU: 1 to 3 levels on the load path, each at least
// 4x the capacity and 1.4x the latency of the one before, the last under 4
// MiB; random line size, ways and replacement; a TLB whose reach is past the
// sweep (translation steps are the presets' business). The sweep ends at
// 64 MiB, the least the analysis accepts as reaching DRAM.
SimConfig random_config(uint64_t seed) {
  SplitMix64 rng(seed);
  nlohmann::json j = minimal_description();
  j["name"] = fmt::format("random-{}", seed);
  j["noise"] = {{"relative_sigma", 0.01 + 0.01 * (rng.below(100) / 100.0)},
                {"outlier_probability", 0.03},
                {"outlier_max_relative", 0.3},
                {"seed", seed}};
  const int levels = 1 + static_cast<int>(rng.below(3));
  const uint32_t line = 32u << rng.below(3);  // 32, 64, 128
  nlohmann::json caches = nlohmann::json::array();
  uint64_t capacity = (4096u << rng.below(4)) * (1 + rng.below(3));  // 4 KiB .. 96 KiB
  double latency = 20 + rng.below(200);
  const char* policies[] = {"lru", "plru", "random"};
  for (int i = 0; i < levels; ++i) {
    const uint32_t ways = 2u << rng.below(4);  // 2 .. 16
    uint64_t cap = capacity / (uint64_t{line} * ways) * line * ways;
    if (cap == 0) cap = uint64_t{line} * ways;
    caches.push_back({{"name", fmt::format("L{}", i + 1)},
                      {"capacity_bytes", cap},
                      {"line_bytes", line},
                      {"associativity", ways},
                      {"replacement", policies[rng.below(3)]},
                      {"hit_latency_ns", latency},
                      {"bytes_per_clock", 32},
                      {"path", "both"}});
    capacity = std::min<uint64_t>(cap * (4 + rng.below(13)), 4u << 20);
    latency *= 1.4 + rng.below(100) / 100.0;
    if (capacity <= cap) break;
  }
  j["memory"]["caches"] = caches;
  j["memory"]["dram"]["latency_ns"] = latency * (1.0 + 0.1 * (1 + rng.below(10)));
  j["memory"]["tlb"] = {{"entries", 64}, {"page_bytes", 1 << 24}, {"miss_penalty_ns", 100}};
  return parse_sim_config(j, j["name"].get<std::string>());
}

}  // namespace

class SimPresetRecovery : public testing::TestWithParam<std::string> {};

TEST_P(SimPresetRecovery, LatencyProbeRecoversTheHierarchy) {
  expect_recovered(run_latency_on(load_sim_preset(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(Presets, SimPresetRecovery,
                         testing::Values("mali-g52", "adreno-530", "adreno-615", "adreno-320", "adreno-420"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

class SimRandomRecovery : public testing::TestWithParam<uint64_t> {};

TEST_P(SimRandomRecovery, LatencyProbeRecoversTheHierarchy) {
  expect_recovered(run_latency_on(random_config(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(Drawn, SimRandomRecovery, testing::Values(11, 12, 13, 14, 15, 16, 17, 18));

TEST(SimDevice, LaunchEmptyKernelStoresItsValue) {
  SimDevice dev(parse_sim_config(minimal_description(), "tiny"), "sim:tiny");
  auto sink = dev.create_buffer(4);
  Kernel& k = dev.kernel({"launch", "empty", {}});
  const KernelArg args[] = {sink.get(), 42u};
  EXPECT_GT(dev.launch(k, Range::d1(1024), Range::d1(64), args), 0);
  EXPECT_EQ(dev.read_values<uint32_t>(*sink, 1)[0], 42u);
}
