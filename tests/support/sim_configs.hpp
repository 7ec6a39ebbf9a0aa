// The simulated GPUs the recovery tests run on: the five presets and whole
// GPUs drawn at random from fixed seeds ("drawn-N"), so that recovery is
// shown for descriptions nobody tuned the inference on.
#pragma once

#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/random.hpp"
#include "core/results.hpp"
#include "probes/probe.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpuscope::test {

inline const std::vector<std::string> kSimPresets = {"mali-g52", "adreno-530", "adreno-615", "adreno-320",
                                                     "adreno-420"};
inline const std::vector<std::string> kDrawnGpus = {"drawn-1", "drawn-2", "drawn-3"};

// A plausible phone-to-small-discrete GPU, every parameter the probes read
// drawn from the seed: wave width 8-64 with 1-4 units of 8-32 waves per
// core and work-groups large enough for the divergence probe's partition
// sets (8 waves); a per-core L1 of 8-96 KiB and a shared L2 8-32 times
// larger (at most 4 MiB), LRU, lines of 64 or 128 B; a TLB of 32-64 MiB
// reach; DRAM slower than the L2 in latency and bandwidth; local memory on
// chip or backed by the L1; an FP32 FMA rate of 1 or 2 per lane per clock,
// with or without FMA+ADD dual issue; an instruction cache of 8-32 KiB at
// 4-8 bytes per add; a host link of 1-16 GB/s, zero copy or not; a clock
// governor and a matrix engine (below). Noise at 1%.
inline nlohmann::json drawn_description(uint64_t seed) {
  SplitMix64 rng(seed * 0x9e3779b97f4a7c15ULL + 7);
  const auto among = [&](std::initializer_list<uint64_t> v) { return *(v.begin() + rng.below(v.size())); };
  const auto between = [&](double lo, double hi) { return lo + (hi - lo) * (rng.below(1001) / 1000.0); };

  const uint64_t wave = among({8, 16, 32, 64});
  const uint64_t units = among({1, 2, 3, 4});
  const uint64_t waves = among({8, 16, 32});
  const uint64_t items = units * waves * wave;
  // Largest group: a power of two of at least 8 waves, within what a core holds.
  uint64_t max_wg = std::min<uint64_t>(1024, std::bit_floor(items));
  max_wg = std::max<uint64_t>(max_wg, 8 * wave);
  const uint64_t cores = among({1, 2, 4, 6, 8});
  const double clock = 50 * std::round(between(300, 1000) / 50);

  const uint64_t line = among({64, 128});
  const uint64_t l1 = (8192u << rng.below(3)) * among({1, 3}) / (rng.below(2) ? 1 : 2);  // 4..96 KiB
  const uint64_t l1_cap = std::max<uint64_t>(l1 / (line * 4) * line * 4, 8192);
  const uint64_t l2_cap = std::min<uint64_t>(l1_cap * among({8, 16, 32}), 4u << 20) / (line * 16) * (line * 16);
  const double l1_lat = std::round(between(30, 120));
  const double l2_lat = std::round(l1_lat * between(1.6, 3.0));
  const double dram_lat = std::round(l2_lat * between(1.5, 2.5));
  const double l1_bpc = among({16, 32, 64});
  const double l2_bpc = among({32, 64, 128});
  const double l2_gbps = l2_bpc * clock / 1000;
  const double dram_gbps = std::round(l2_gbps * between(0.3, 0.7) * 10) / 10;

  const bool local_on_chip = rng.below(2) == 0;
  const uint64_t fma_per_lane = among({1, 2});
  const bool dual = rng.below(2) == 0;

  nlohmann::json j = {
      {"name", fmt::format("drawn-{}", seed)},
      {"core",
       {{"shader_cores", cores},
        {"units_per_core", units},
        {"lanes_per_unit", wave},
        {"wave_width", wave},
        {"waves_per_unit", waves},
        {"register_file_bytes_per_unit", waves * wave * 4 * 32},
        {"register_alloc_granularity", 4},
        {"max_registers_per_item", 64},
        {"clock_mhz", clock},
        {"workgroups_per_core", among({2, 4, 8})},
        {"max_work_group_size", max_wg}}},
      {"memory",
       {{"caches",
         {{{"name", "L1"},
           {"capacity_bytes", l1_cap},
           {"line_bytes", line},
           {"associativity", 4},
           {"replacement", "lru"},
           {"hit_latency_ns", l1_lat},
           {"bytes_per_clock", l1_bpc},
           {"path", "both"},
           {"per_core", true}},
          {{"name", "L2"},
           {"capacity_bytes", l2_cap},
           {"line_bytes", line},
           {"associativity", 16},
           {"replacement", "lru"},
           {"hit_latency_ns", l2_lat},
           {"bytes_per_clock", l2_bpc},
           {"path", "both"}}}},
        {"tlb", {{"entries", among({512, 1024})}, {"page_bytes", 65536}, {"miss_penalty_ns", std::round(between(80, 250))}}},
        {"dram", {{"latency_ns", dram_lat}, {"bandwidth_gbps", dram_gbps}}},
        {"global_mem_bytes", uint64_t{2} << 30},
        {"max_alloc_bytes", uint64_t{512} << 20}}},
      {"local_memory",
       {{"bytes_per_work_group", 32768},
        {"location", local_on_chip ? "on_chip" : "load_store_cache"},
        {"latency_ns", local_on_chip ? std::round(l1_lat * between(0.3, 0.8)) : l1_lat},
        {"bytes_per_clock", among({16, 32, 64})},
        {"workgroups_per_core_with_local", 0}}},
      {"rates",
       {{"ops",
         {{{"type", "float"}, {"op", "fma"}, {"per_clock_per_core", units * wave * fma_per_lane}},
          {{"type", "float"}, {"op", "add"}, {"per_clock_per_core", units * wave * fma_per_lane}}}},
        {"dual_issue_fma_add", dual}}},
      {"icache",
       {{"capacity_bytes", among({8192, 16384, 32768})},
        {"bytes_per_op", among({4, 6, 8})},
        {"base_code_bytes", 512},
        {"miss_bytes_per_clock", among({4, 8})}}},
      {"host", {{"link_bandwidth_gbps", std::round(between(1, 16) * 10) / 10}, {"zero_copy", rng.below(2) == 0}}},
      {"noise", {{"relative_sigma", 0.01}, {"outlier_probability", 0.02}, {"outlier_max_relative", 0.3}, {"seed", seed}}}};
  // A clock governor, drawn last so that every parameter above stays as it
  // was drawn before governors existed (only the sustain family reads it).
  j["governor"] = {{"idle_mhz", std::round(clock * between(0.1, 0.4))},
                   {"ramp_ms", std::round(between(20, 80))},
                   {"idle_after_ms", std::round(between(20, 200))},
                   {"throttle_after_s", std::round(between(5, 20))},
                   {"throttled_fraction", std::round(between(0.6, 0.9) * 100) / 100},
                   {"throttle_ramp_s", std::round(between(2, 8))}};
  // A matrix engine, drawn after the governor for the same reason (only the
  // matrix family reads it): f16 x f16 -> f32 at 128 to 1024 multiply-adds
  // per clock per core, int8 at 1x or 2x that, latencies of 16 to 64 cycles.
  const double f16_rate = among({128, 256, 512, 1024});
  j["matrix"] = {{"shapes",
                  {{{"a", "f16"}, {"b", "f16"}, {"c", "f32"}, {"result", "f32"}, {"m", 16}, {"n", 16}, {"k", 16},
                    {"macs_per_clock_per_core", f16_rate},
                    {"latency_cycles", std::round(between(16, 64))}},
                   {{"a", "i8"}, {"b", "i8"}, {"c", "i32"}, {"result", "i32"}, {"m", 16}, {"n", 16}, {"k", 32},
                    {"macs_per_clock_per_core", f16_rate * among({1, 2})},
                    {"latency_cycles", std::round(between(16, 64))}}}}};
  return j;
}

// The --device argument of `gpuscope run` for a preset or a drawn GPU (whose
// description is written into `dir`).
inline std::string sim_device_arg(const std::string& name, const std::filesystem::path& dir) {
  if (name.rfind("drawn-", 0) != 0) return "sim:" + name;
  std::filesystem::create_directories(dir);
  const auto path = dir / (name + ".json");
  std::ofstream(path) << drawn_description(std::stoull(name.substr(6))).dump(2);
  return "sim:" + path.string();
}

// A preset by name, or "drawn-N" drawn from seed N.
inline sim::SimConfig sim_config_named(const std::string& name) {
  if (name.rfind("drawn-", 0) == 0) return sim::parse_sim_config(drawn_description(std::stoull(name.substr(6))), name);
  return sim::load_sim_preset(name);
}

// Test names from configuration names ("mali-g52" -> mali_g52).
inline std::string sim_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

// One probe on a sim device, its series in Results beside the device's info.
inline Results run_sim_probe(sim::SimDevice& dev, std::vector<Series> (*probe)(ProbeContext&), bool quick) {
  ProbeOptions opts;
  opts.quick = quick;
  ProbeContext ctx{dev, opts, 30.0};
  Results r;
  r.device = dev.info();
  r.series = probe(ctx);
  return r;
}

}  // namespace gpuscope::test
