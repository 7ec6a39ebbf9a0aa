// Findings -> sim description. Each section reads the findings that measure
// it; what no finding measured is filled from what the driver reported, or
// assumed with the reason. The rules that resolve contradictions are named
// below and stated where they apply.
#include "model/model_builder.hpp"

#include "model/model_reading.hpp"

#include "backends/sim/sim_config.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace gpuscope::model {
namespace {

using nlohmann::json;
using namespace detail;

constexpr uint64_t kKiB = 1024;

// Ways given to a cache level whose associativity nothing measured: a
// random chase over an LRU set-associative cache of 16 ways steps within a
// few percent of its capacity, as the chases of real GPUs do. A level of
// fewer lines is fully associative.
constexpr uint32_t kAssumedWays = 16;

// A texture level is the load path's cache seen through the sampler when
// their latencies agree within this fraction (and the texture path is
// said to share it): the same rule analysis/texture.cpp uses to call a
// texture level the load path's cache.
constexpr double kSameCacheLatencyTolerance = 0.05;

// Page size assumed for a TLB whose page nothing measured: 64 KiB on GPUs
// (NVIDIA's and Arm's large pages; a chase's miss rate past the reach does
// not depend on it), 4 KiB on CPUs.
constexpr uint64_t kAssumedGpuPageBytes = 64 * kKiB;
constexpr uint64_t kAssumedCpuPageBytes = 4 * kKiB;

// Bounds on the model's noise: what the run's own samples spread by,
// within what the sim accepts and a curve stays readable at.
constexpr double kMinNoiseSigma = 0.002;
constexpr double kMaxNoiseSigma = 0.2;

class Builder {
 public:
  explicit Builder(const Results& r) : r_(r), fx_(r.findings) {}

  GpuModel build() {
    GpuModel m;
    json d = json::object();
    d["name"] = r_.device.name.empty() ? std::string("model of ") + r_.device.id : r_.device.name + " (model)";
    d["vendor"] = r_.device.vendor.empty() ? "gpuscope-model" : r_.device.vendor;
    d["core"] = core();
    d["memory"] = memory();
    if (auto l = local()) d["local_memory"] = *l;
    d["rates"] = rates();
    d["divergence_granularity"] = d["core"]["wave_width"];
    d["atomics"] = atomics();
    if (auto ic = icache()) d["icache"] = *ic;
    if (auto h = host()) d["host"] = *h;
    launch(d);
    d["noise"] = noise();
    not_modelled_.push_back({"matrix", "matrix engine rates are not written into the model"});
    not_modelled_.push_back({"raster", "the graphics pipeline is not written into the model"});
    not_modelled_.push_back({"governor", "the clock is modelled as holding the measured clock"});
    m.description = std::move(d);
    m.contradictions = std::move(contradictions_);
    m.gaps = std::move(gaps_);
    for (const auto& s : dropped_) m.gaps.push_back(s);
    m.measured_values = a_.count(0);
    m.reported_values = a_.count(1);
    m.assumed_values = a_.count(2);
    json not_modelled = json::array();
    for (const auto& [section, why] : not_modelled_) not_modelled.push_back({{"section", section}, {"why", why}});
    m.description["comment"] = {{"made_by", "gpuscope model (docs/closed-loop.md)"},
                                {"device", r_.device.id},
                                {"not_modelled", not_modelled}};
    return m;
  }

 private:
  double clock_mhz() {
    if (!clock_) {
      if (auto c = fx_.positive("device.measured_clock_mhz")) {
        clock_ = *c;
        clock_ann_ = a_.measured(*c, {"device.measured_clock_mhz"});
      } else if (r_.device.clock_mhz > 0) {
        clock_ = r_.device.clock_mhz;
        clock_ann_ = a_.reported(r_.device.clock_mhz, "the device's reported clock");
      } else {
        clock_ = 1000;
        clock_ann_ = a_.assumed(1000, "no clock measured or reported");
      }
      clock_ = std::clamp(*clock_, 1.0, 10000.0);
    }
    return *clock_;
  }
  double ghz() { return clock_mhz() / 1000.0; }
  uint32_t cores() const { return std::max<uint32_t>(1, std::min<uint32_t>(r_.device.compute_units, 4096)); }

  json core() {
    json c = json::object();
    c["shader_cores"] = a_.reported(cores(), "compute units");
    clock_mhz();
    c["clock_mhz"] = clock_ann_;

    // The wave: what divergence measured, else the driver's subgroup size.
    uint32_t wave = 32;
    if (auto w = fx_.positive("exec.wave_width")) {
      wave = clamp_u32(*w, 1, 1024);
      c["wave_width"] = a_.measured(wave, {"exec.wave_width"});
    } else if (!r_.device.features.subgroup_sizes.empty()) {
      wave = std::clamp<uint32_t>(r_.device.features.subgroup_sizes.front(), 1, 1024);
      c["wave_width"] = a_.reported(wave, "subgroup size");
    } else {
      c["wave_width"] = a_.assumed(wave, "no wave width measured or reported");
    }
    wave_ = wave;

    uint32_t units = 1;
    if (auto u = fx_.positive("exec.scheduler_partitions")) {
      units = clamp_u32(*u, 1, 64);
      c["units_per_core"] = a_.measured(units, {"exec.scheduler_partitions"});
    } else {
      c["units_per_core"] = a_.assumed(units, "scheduler partitions not measured");
    }
    units_ = units;

    // Lanes: the FP32 rate per core over its units, snapped to a divisor or
    // multiple of the wave (the sim issues a wave over whole lanes).
    std::optional<double> rate;
    std::vector<std::string> rate_ids;
    for (const char* base : {"compute.fp32.fma", "compute.fp32.mad", "compute.fp32.add"}) {
      std::tie(rate, rate_ids) = per_clock_rate(base);
      if (rate) break;
    }
    uint32_t lanes = wave;
    if (rate) {
      const double want = *rate / units;
      std::vector<uint32_t> candidates;
      for (uint32_t v = 1; v <= 1024; v *= 2) candidates.push_back(v);
      for (uint32_t k = 1; k * wave <= 1024; ++k) candidates.push_back(k * wave);
      double best = 1e300;
      for (uint32_t v : candidates) {
        if (wave % v != 0 && v % wave != 0) continue;
        const double err = std::abs(std::log(v / std::max(want, 1e-9)));
        if (err < best) best = err, lanes = v;
      }
      rate_ids.push_back("exec.scheduler_partitions");
      c["lanes_per_unit"] = a_.measured(lanes, rate_ids);
    } else {
      c["lanes_per_unit"] = a_.assumed(lanes, "no FP32 rate measured: one lane per work-item of a wave");
    }

    const uint64_t max_wg = std::clamp<uint64_t>(r_.device.max_work_group_size ? r_.device.max_work_group_size : 256, 1, 4096);
    // A core must hold the largest work-group the driver allows.
    const uint64_t need = (max_wg + uint64_t{units} * wave - 1) / (uint64_t{units} * wave);
    uint32_t waves = 16;
    const auto measured_waves = fx_.positive("exec.max_waves_per_cu");
    if (measured_waves) {
      waves = clamp_u32(std::ceil(*measured_waves / units), 1, 1024);
      c["waves_per_unit"] = a_.measured(waves, {"exec.max_waves_per_cu", "exec.scheduler_partitions"});
    } else {
      waves = static_cast<uint32_t>(std::clamp<uint64_t>(need, 16, 1024));
      c["waves_per_unit"] = a_.assumed(waves, "resident waves not measured: 16, or what the largest work-group needs");
    }
    if (measured_waves && waves < need) {
      contradictions_.push_back({"core.waves_per_unit",
                                 {"exec.max_waves_per_cu"},
                                 fmt::format("{} waves per unit cannot hold the driver's largest work-group ({} "
                                             "work-items of {}-wide waves over {} units); raised to {}",
                                             waves, max_wg, wave, units, need)});
      waves = static_cast<uint32_t>(std::min<uint64_t>(need, 1024));
      c["waves_per_unit"] = a_.measured(waves, {"exec.max_waves_per_cu", "device max_work_group_size"});
    }
    if (auto regs = fx_.positive("exec.registers.per_cu")) {
      const uint64_t bytes = static_cast<uint64_t>(std::max(64.0, *regs * 4 / units));
      c["register_file_bytes_per_unit"] = a_.measured(bytes, {"exec.registers.per_cu"});
    } else {
      c["register_file_bytes_per_unit"] = a_.assumed(65536, "register file not measured: 64 KiB per unit");
    }
    c["register_alloc_granularity"] = a_.assumed(1, "register allocation steps not measured");
    uint32_t max_regs = 64;
    if (const Finding* f = fx_.get("exec.registers.occupancy_cliffs")) {
      if (const auto* v = std::get_if<std::vector<double>>(&f->value); v && !v->empty()) {
        max_regs = clamp_u32(*std::max_element(v->begin(), v->end()), 1, 1024);
        c["max_registers_per_item"] = a_.measured(max_regs, {"exec.registers.occupancy_cliffs"});
      }
    }
    if (!c.contains("max_registers_per_item"))
      c["max_registers_per_item"] = a_.assumed(max_regs, "no register cliffs measured");
    if (auto g = fx_.positive("sched.max_workgroups_per_cu"))
      c["workgroups_per_core"] = a_.measured(clamp_u32(*g, 1, 1024), {"sched.max_workgroups_per_cu"});
    else
      c["workgroups_per_core"] = a_.assumed(8, "work-groups per core not measured");
    c["max_work_group_size"] = a_.reported(max_wg, "largest work-group");
    return c;
  }

  // The sim's cache entry for `l`, its capacity snapped to whole sets.
  json cache_entry(const Level& l, uint32_t line, bool first_on_path, const std::string& path) {
    json e = json::object();
    e["name"] = l.name;
    const uint64_t lines_wanted = std::max<uint64_t>(1, static_cast<uint64_t>(l.capacity_bytes / line));
    const uint32_t ways = lines_wanted < kAssumedWays ? static_cast<uint32_t>(lines_wanted) : kAssumedWays;
    uint64_t capacity = round_to_multiple(l.capacity_bytes, uint64_t{line} * ways);
    capacity = std::min<uint64_t>(capacity, sim::kSimMaxCacheBytes / (uint64_t{line} * ways) * line * ways);
    e["capacity_bytes"] = l.placeholder ? a_.assumed(capacity, "no cache level measured: the driver's cache size")
                                        : a_.measured(capacity, l.capacity_ids);
    e["line_bytes"] = line_ann_for(line, first_on_path);
    const uint32_t sector = l.fetch_bytes && std::has_single_bit(*l.fetch_bytes) && *l.fetch_bytes <= line &&
                                    line / *l.fetch_bytes <= 64
                                ? *l.fetch_bytes
                                : line;
    e["sector_bytes"] = l.fetch_bytes && sector == *l.fetch_bytes
                            ? a_.measured(sector, {fmt::format("{}.fetch_bytes", l.capacity_ids[0].substr(
                                                                                    0, l.capacity_ids[0].rfind('.')))})
                            : a_.assumed(sector, "fetch size not measured: whole lines");
    e["associativity"] =
        a_.assumed(ways, ways < kAssumedWays ? "fully associative (fewer lines than 16)" : "ways not measured: 16");
    e["replacement"] = a_.assumed("lru", "replacement not measured");
    e["hit_latency_ns"] = l.placeholder ? a_.assumed(l.latency_ns, "no cache level measured: 100 ns")
                                        : a_.measured(l.latency_ns, l.latency_ids);
    const bool per_core = l.shared ? !*l.shared : first_on_path;
    const std::string shared_id = l.capacity_ids[0].substr(0, l.capacity_ids[0].rfind('.')) + ".shared_by_cus";
    e["per_core"] = l.shared ? a_.measured(per_core, {shared_id})
                             : a_.assumed(per_core, first_on_path ? "sharing not measured: a first level is per core"
                                                                  : "sharing not measured: an outer level is shared");
    if (l.bandwidth_gbps) {
      const double bpc = *l.bandwidth_gbps / ghz() / (per_core ? cores() : 1);
      e["bytes_per_clock"] = a_.measured(std::clamp(bpc, 0.01, 1e6),
                                         {l.capacity_ids[0].substr(0, l.capacity_ids[0].rfind('.')) + ".bandwidth_gbps",
                                          "device.measured_clock_mhz"});
    } else {
      e["bytes_per_clock"] = a_.assumed(64, "bandwidth not measured: 64 B per clock");
    }
    e["path"] = path;
    return e;
  }

  json line_ann_for(uint32_t line, bool first_on_path) {
    if (first_on_path && line_measured_) return a_.measured(line, {"memory.line_bytes"});
    if (first_on_path && line_reported_) return a_.reported(line, "global cache line");
    return a_.assumed(line, first_on_path ? "line not measured: 64 B"
                                          : "only the first level's line is measured: outer levels keep it");
  }

  json memory() {
    json m = json::object();
    // The first level's line: measured, else reported, else 64 B.
    uint32_t line = 64;
    if (auto l = fx_.positive("memory.line_bytes")) {
      line = power_of_two_at_least(*l, 4, 4096);
      line_measured_ = true;
    } else if (r_.device.global_cache_line_bytes) {
      line = power_of_two_at_least(r_.device.global_cache_line_bytes, 4, 4096);
      line_reported_ = true;
    }

    auto loads = keep_growing(read_levels(fx_, "memory", dropped_), "memory", contradictions_);
    auto tex = keep_growing(read_levels(fx_, "texture", dropped_), "texture", contradictions_);
    if (loads.empty()) {
      // No level measured: one assumed level, so the description is one.
      Level l;
      l.name = "L1";
      l.capacity_bytes = r_.device.global_cache_bytes ? static_cast<double>(r_.device.global_cache_bytes) : 65536;
      l.latency_ns = 100;
      l.capacity_ids = {"memory.L1.capacity_bytes"};
      l.latency_ids = {"memory.L1.latency_ns"};
      l.placeholder = true;
      loads.push_back(l);
      dropped_.push_back("no cache level was measured: the model's one level is a placeholder");
    }

    // Texture levels: a level within kSameCacheLatencyTolerance of a load
    // level's latency is that cache on both paths (the first one only where
    // texture.shares_l1 says so); the rest are texture-only caches.
    const auto shares_l1 = fx_.flag("texture.shares_l1");
    std::vector<bool> tex_is_load(tex.size(), false);
    for (size_t j = 0; j < tex.size(); ++j) {
      for (size_t i = 0; i < loads.size(); ++i) {
        const bool close = std::abs(tex[j].latency_ns - loads[i].latency_ns) <=
                           kSameCacheLatencyTolerance * loads[i].latency_ns;
        if (!close || (i == 0 && shares_l1 && !*shares_l1)) continue;
        loads[i].path = "both";
        tex_is_load[j] = true;
        break;
      }
    }
    if (shares_l1 && *shares_l1 && !tex.empty() && !loads.empty() && loads[0].path != "both")
      gaps_.push_back(fmt::format(
          "texture.shares_l1: the texture path shares the L1, but its first level reads {:.3g} ns against the load "
          "path's {:.3g} ns; the sim has one latency per cache, so the model's texture L1 is a cache of its own "
          "(the replay's texture pairs will not show the sharing)",
          tex[0].latency_ns, loads[0].latency_ns));

    // Merge by latency: the sim lists caches nearest first; paths are
    // filtered from the one list.
    std::vector<std::pair<Level, bool>> all;  // level, first on its path
    for (size_t i = 0; i < loads.size(); ++i) all.push_back({loads[i], i == 0});
    bool first_tex = true;
    for (size_t j = 0; j < tex.size(); ++j) {
      if (tex_is_load[j]) {
        first_tex = false;
        continue;
      }
      Level t = tex[j];
      t.name = fmt::format("texture L{}", j + 1);
      t.path = "texture";
      if (j == 0) {
        if (auto bw = fx_.positive("texture.bandwidth_gbps")) t.bandwidth_gbps = bw;
      }
      all.push_back({t, first_tex});
      first_tex = false;
    }
    // A texture-only level that does not grow past a shared ("both") level
    // nearer on the texture path would break that path's growth (the sim
    // checks it): drop_texture_path_inversions leaves it out.
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& x, const auto& y) { return x.first.latency_ns < y.first.latency_ns; });
    drop_texture_path_inversions(all);

    json caches = json::array();
    for (const auto& [l, first] : all) caches.push_back(cache_entry(l, line, first, l.path));
    m["caches"] = caches;

    // The last level on the load path bounds DRAM's latency from below.
    double last_load_ns = 0, last_tex_ns = 0;
    for (const auto& [l, first] : all) {
      if (l.path != "texture") last_load_ns = std::max(last_load_ns, l.latency_ns);
      if (l.path != "load_store") last_tex_ns = std::max(last_tex_ns, l.latency_ns);
    }
    json dram = json::object();
    const double floor_ns = std::max(last_load_ns, last_tex_ns);
    if (auto lat = fx_.positive("memory.dram.latency_ns"); lat && *lat > floor_ns) {
      dram["latency_ns"] = a_.measured(*lat, {"memory.dram.latency_ns"});
    } else {
      const double v = floor_ns * 1.25;
      if (lat)
        contradictions_.push_back({"memory.dram.latency_ns",
                                   {"memory.dram.latency_ns"},
                                   fmt::format("DRAM's {:.3g} ns is not slower than the last cache level ({:.3g} ns); "
                                               "the model puts DRAM at 1.25x that level",
                                               *lat, floor_ns)});
      dram["latency_ns"] = a_.assumed(v, lat ? "measured DRAM latency contradicts the caches (see comment)"
                                             : "DRAM latency not measured: 1.25x the last cache level");
    }
    if (auto bw = fx_.positive("memory.dram.bandwidth_gbps"))
      dram["bandwidth_gbps"] = a_.measured(*bw, {"memory.dram.bandwidth_gbps"});
    else
      dram["bandwidth_gbps"] = a_.assumed(10, "DRAM bandwidth not measured");
    m["dram"] = dram;

    if (auto t = tlb()) m["tlb"] = *t;
    const uint64_t global = std::max<uint64_t>(r_.device.global_mem_bytes, uint64_t{1} << 20);
    m["global_mem_bytes"] = a_.reported(std::min<uint64_t>(global, uint64_t{1} << 50), "global memory");
    const uint64_t alloc = std::clamp<uint64_t>(r_.device.max_alloc_bytes ? r_.device.max_alloc_bytes : global / 4,
                                                uint64_t{1} << 16, std::min<uint64_t>(global, uint64_t{1} << 50));
    m["max_alloc_bytes"] = a_.reported(alloc, "largest allocation");
    m["address_bits"] = a_.reported(r_.device.address_bits == 32 ? 32 : 64, "address bits");
    return m;
  }

  // Rule `texture-path-growth`: on the texture path (texture-only levels and
  // shared ones) levels must grow too; a texture-only level that is not
  // larger than a shared level nearer on that path is left out.
  void drop_texture_path_inversions(std::vector<std::pair<Level, bool>>& all) {
    for (const std::string path : {"load_store", "texture"}) {
      const Level* prev = nullptr;
      for (auto it = all.begin(); it != all.end();) {
        const Level& l = it->first;
        const bool on_path = path == "texture" ? l.path != "load_store" : l.path != "texture";
        if (!on_path) {
          ++it;
          continue;
        }
        if (prev && (l.capacity_bytes <= prev->capacity_bytes || l.latency_ns <= prev->latency_ns)) {
          contradictions_.push_back(
              {"memory.caches", {l.capacity_ids[0], prev->capacity_ids[0]},
               fmt::format("{} ({:.0f} B, {:.3g} ns) does not grow past {} ({:.0f} B, {:.3g} ns) on the {} path; "
                           "left out",
                           l.name, l.capacity_bytes, l.latency_ns, prev->name, prev->capacity_bytes, prev->latency_ns,
                           path == "texture" ? "texture" : "load")});
          it = all.erase(it);
          continue;
        }
        prev = &it->first;
        ++it;
      }
      // `prev` points into `all`, which erase does not move before it.
    }
    // First-on-path flags after removals.
    bool seen_load = false, seen_tex = false;
    for (auto& [l, first] : all) {
      const bool loads = l.path != "texture", tex = l.path != "load_store";
      first = (loads && !seen_load) || (tex && !seen_tex);
      seen_load = seen_load || loads;
      seen_tex = seen_tex || tex;
    }
  }

  std::optional<json> tlb() {
    const auto reach = fx_.positive("memory.tlb.reach_bytes");
    const auto penalty = fx_.number("memory.tlb.miss_penalty_ns");
    if (!reach || !penalty || *penalty < 0) {
      not_modelled_.push_back({"memory.tlb", "no TLB reach and penalty measured: no TLB modelled"});
      return std::nullopt;
    }
    json t = json::object();
    uint64_t page = r_.device.type == "cpu" ? kAssumedCpuPageBytes : kAssumedGpuPageBytes;
    bool page_measured = false;
    if (auto p = fx_.positive("memory.tlb.page_bytes")) {
      page = std::bit_ceil(static_cast<uint64_t>(std::clamp(*p, 256.0, 4294967296.0)));
      page_measured = true;
    }
    // Entries within the sim's bound: a larger page where the reach needs it.
    while (*reach / static_cast<double>(page) > static_cast<double>(sim::kSimMaxTlbEntries)) page *= 2;
    const uint32_t entries = clamp_u32(*reach / static_cast<double>(page), 1, sim::kSimMaxTlbEntries);
    t["entries"] = a_.measured(entries, {"memory.tlb.reach_bytes"});
    t["page_bytes"] = page_measured ? a_.measured(page, {"memory.tlb.page_bytes"})
                                    : a_.assumed(page, "page size not measured: the chase's miss rate past the "
                                                       "reach does not depend on it");
    t["associativity"] = a_.assumed(0, "fully associative: ways not measured");
    t["replacement"] = a_.assumed("lru", "replacement not measured");
    t["miss_penalty_ns"] = a_.measured(std::min(*penalty, 1e6), {"memory.tlb.miss_penalty_ns"});
    return t;
  }

  std::optional<json> local() {
    const auto lat = fx_.positive("local.latency_ns");
    if (!lat) {
      not_modelled_.push_back({"local_memory", "local memory not measured"});
      return std::nullopt;
    }
    json l = json::object();
    if (auto cap = fx_.positive("local.capacity_bytes"))
      l["bytes_per_work_group"] = a_.measured(static_cast<uint64_t>(*cap), {"local.capacity_bytes"});
    else
      l["bytes_per_work_group"] = a_.reported(r_.device.local_mem_bytes, "local memory size");
    if (auto on = fx_.flag("local.on_chip"))
      l["location"] = *on ? "on_chip" : "load_store_cache";
    else
      l["location"] = r_.device.local_mem_dedicated ? "on_chip" : "load_store_cache";
    l["latency_ns"] = a_.measured(*lat, {"local.latency_ns"});
    if (auto bw = fx_.positive("local.bandwidth_gbps"))
      l["bytes_per_clock"] =
          a_.measured(std::clamp(*bw / ghz() / cores(), 0.01, 1e6), {"local.bandwidth_gbps", "device.measured_clock_mhz"});
    else
      l["bytes_per_clock"] = a_.assumed(32, "local bandwidth not measured");
    l["workgroups_per_core_with_local"] = a_.assumed(0, "no limit measured beyond the core's");
    return l;
  }

  json rates() {
    static const std::map<std::string, std::string> kTypes = {{"fp32", "float"}, {"fp16", "half"},   {"fp64", "double"},
                                                              {"int32", "int"},  {"int16", "short"}, {"int8", "char"},
                                                              {"int64", "long"}};
    json rt = json::object();
    json ops = json::array();
    std::set<std::pair<std::string, std::string>> listed;
    bool fp64 = false, fp16 = false;
    // compute.<type>.<op>.ops_per_clock_per_cu, with .latency_ns where the
    // oplatency probe timed the same op.
    for (const auto& [id, f] : fx_.all()) {
      if (id.rfind("compute.", 0) != 0) continue;
      const auto dot1 = id.find('.', 8);
      if (dot1 == std::string::npos) continue;
      const auto dot2 = id.find('.', dot1 + 1);
      if (dot2 == std::string::npos) continue;
      const std::string type = id.substr(8, dot1 - 8), op = id.substr(dot1 + 1, dot2 - dot1 - 1),
                        what = id.substr(dot2 + 1);
      auto t = kTypes.find(type);
      if (t == kTypes.end() || !sim_models_op(op)) continue;
      if (what != "ops_per_clock_per_cu" && what != "throughput_gops" && what != "latency_ns") continue;
      if (!listed.insert({t->second, op}).second) continue;
      const std::string base = "compute." + type + "." + op;
      const auto [rate, rate_ids] = per_clock_rate(base);
      const auto lat = fx_.positive(base + ".latency_ns");
      json o = json::object();
      o["type"] = t->second;
      o["op"] = op;
      if (rate) {
        o["per_clock_per_core"] = a_.measured(std::clamp(*rate, 1e-6, 1e6), rate_ids);
      } else {
        // Timed only as a dependent chain: its rate is the type's basic
        // rate where measured, so the latency is what the model adds.
        double basic = 0;
        for (const char* b : {"fma", "mad", "add", "mul"})
          if (auto v = per_clock_rate("compute." + type + "." + b).first) {
            basic = *v;
            break;
          }
        if (basic <= 0) basic = static_cast<double>(units_) * wave_;
        o["per_clock_per_core"] = a_.assumed(basic, "throughput not measured: the type's basic rate");
      }
      if (lat) o["latency_ns"] = a_.measured(std::min(*lat, 1e6), {base + ".latency_ns"});
      ops.push_back(o);
      fp64 = fp64 || type == "fp64";
      fp16 = fp16 || type == "fp16";
    }
    rt["ops"] = ops;
    if (auto d = fx_.flag("compute.dual_issue.fp32_fma_add"))
      rt["dual_issue_fma_add"] = a_.measured(*d, {"compute.dual_issue.fp32_fma_add"});
    else
      rt["dual_issue_fma_add"] = a_.assumed(false, "dual issue not measured");
    rt["fma_emulated"] = a_.assumed(false, "fma measured as listed");
    std::optional<double> native;
    for (const char* id : {"compute.fp32.native_sin.rate_vs_fp32_fma", "compute.fp32.native_exp.rate_vs_fp32_fma",
                           "compute.fp32.native_sqrt.rate_vs_fp32_fma"})
      if ((native = fx_.positive(id))) {
        rt["special_function_rate"] = a_.measured(std::clamp(*native, 1e-4, 1.0), {id});
        break;
      }
    if (!native) rt["special_function_rate"] = a_.assumed(0.25, "special functions not measured");
    rt["fp64"] = fp64 ? a_.measured(true, {"compute.fp64.*"}) : a_.reported(r_.device.features.fp64, "fp64 support");
    rt["fp16"] = fp16 ? a_.measured(true, {"compute.fp16.*"}) : a_.reported(r_.device.features.fp16, "fp16 support");
    return rt;
  }

  // An op's rate per clock per core: the finding where the run read it
  // against a measured clock, else its throughput over the clock the model
  // runs at and the cores (a run without the clock probe's counters).
  std::pair<std::optional<double>, std::vector<std::string>> per_clock_rate(const std::string& base) {
    if (auto v = fx_.positive(base + ".ops_per_clock_per_cu")) return {v, {base + ".ops_per_clock_per_cu"}};
    if (auto g = fx_.positive(base + ".throughput_gops"))
      return {*g / ghz() / cores(), {base + ".throughput_gops", "core.clock_mhz", "core.shader_cores"}};
    return {std::nullopt, {}};
  }

  json atomics() {
    json at = json::object();
    const auto put = [&](const char* key, const std::string& id, double fallback, const char* why) {
      if (auto v = fx_.positive(id))
        at[key] = a_.measured(std::min(*v, 1e6), {id});
      else
        at[key] = a_.assumed(fallback, why);
    };
    const double clock_ns = 1e3 / clock_mhz();
    put("global_latency_ns", "atomics.global.latency_ns", 200, "global atomics not measured");
    put("local_latency_ns", "atomics.local.latency_ns", 50, "local atomics not measured");
    if (auto g = fx_.positive("atomics.global.add_throughput_gops"))
      at["global_adds_per_clock"] = a_.measured(std::clamp(*g / ghz(), 1e-3, 1e6),
                                                {"atomics.global.add_throughput_gops", "device.measured_clock_mhz"});
    else
      at["global_adds_per_clock"] = a_.assumed(cores(), "atomic throughput not measured: one a core a clock");
    at["contended_add_ns"] = a_.assumed(4 * clock_ns, "contended adds not read as a finding: 4 clocks");
    return at;
  }

  std::optional<json> icache() {
    const auto bytes = fx_.positive("exec.icache_bytes");
    if (!bytes) {
      not_modelled_.push_back({"icache", "instruction cache not measured"});
      return std::nullopt;
    }
    json ic = json::object();
    ic["capacity_bytes"] = a_.measured(static_cast<uint64_t>(std::max(256.0, *bytes)), {"exec.icache_bytes"});
    if (auto b = fx_.positive("exec.code_bytes_per_op"))
      ic["bytes_per_op"] = a_.measured(std::clamp(*b, 0.5, 64.0), {"exec.code_bytes_per_op"});
    else
      ic["bytes_per_op"] = a_.assumed(8, "code size per op not measured");
    ic["base_code_bytes"] = a_.assumed(512, "a kernel's code beyond its loop not measured");
    ic["miss_bytes_per_clock"] = a_.assumed(8, "refetch rate not measured");
    return ic;
  }

  std::optional<json> host() {
    const auto h2d = fx_.positive("host.h2d_gbps"), d2h = fx_.positive("host.d2h_gbps");
    if (!h2d && !d2h) {
      not_modelled_.push_back({"host", "host transfers not measured"});
      return std::nullopt;
    }
    json h = json::object();
    // The sim has one link rate for both directions: their mean.
    const double link = h2d && d2h ? (*h2d + *d2h) / 2 : h2d ? *h2d : *d2h;
    std::vector<std::string> ids;
    if (h2d) ids.push_back("host.h2d_gbps");
    if (d2h) ids.push_back("host.d2h_gbps");
    h["link_bandwidth_gbps"] = a_.measured(std::clamp(link, 1e-3, 1e6), ids);
    if (auto z = fx_.flag("host.zero_copy"))
      h["zero_copy"] = a_.measured(*z, {"host.zero_copy"});
    else
      h["zero_copy"] = a_.assumed(false, "zero copy not measured");
    return h;
  }

  void launch(json& d) {
    const auto round = fx_.positive("launch.roundtrip_us");
    const double overhead = round ? std::min(*round, 1e6) : 5;
    d["launch_overhead_us"] = round ? a_.measured(overhead, {"launch.roundtrip_us"})
                                    : a_.assumed(overhead, "launch round trip not measured");
    json la = json::object();
    if (auto v = fx_.positive("launch.dispatch_us"); v && *v <= overhead)
      la["dispatch_us"] = a_.measured(*v, {"launch.dispatch_us"});
    else
      la["dispatch_us"] = a_.assumed(overhead / 2, v ? "dispatch read longer than the round trip: half of it"
                                                     : "dispatch not measured: half the round trip");
    if (auto v = fx_.positive("launch.back_to_back_us"))
      la["back_to_back_us"] = a_.measured(std::min(*v, 1e6), {"launch.back_to_back_us"});
    else
      la["back_to_back_us"] = a_.assumed(overhead / 5, "back-to-back launches not measured: a fifth of the round trip");
    d["launch"] = la;
  }

  // The model's noise: the median relative spread (MAD over median) of the
  // run's own points, so a "what if" run looks as noisy as the real one.
  json noise() {
    std::vector<double> spreads;
    for (const auto& s : r_.series)
      for (const auto& p : s.points)
        if (p.samples.size() >= 3 && p.y > 0 && std::isfinite(p.y)) {
          std::vector<double> dev;
          for (double v : p.samples) dev.push_back(std::abs(v - p.y));
          std::nth_element(dev.begin(), dev.begin() + dev.size() / 2, dev.end());
          spreads.push_back(dev[dev.size() / 2] / p.y);
        }
    json n = json::object();
    if (spreads.empty()) {
      n["relative_sigma"] = a_.assumed(0.01, "no repeated samples to read the noise from");
    } else {
      std::nth_element(spreads.begin(), spreads.begin() + spreads.size() / 2, spreads.end());
      // MAD of a normal is 0.6745 sigma.
      const double sigma = std::clamp(spreads[spreads.size() / 2] / 0.6745, kMinNoiseSigma, kMaxNoiseSigma);
      n["relative_sigma"] = a_.measured(sigma, {"(the samples of every series)"});
    }
    n["outlier_probability"] = a_.assumed(0.02, "outliers not read as a finding");
    n["outlier_max_relative"] = a_.assumed(0.3, "outliers not read as a finding");
    n["seed"] = 1;
    return n;
  }

  const Results& r_;
  FindingIndex fx_;
  Annotator a_;
  std::optional<double> clock_;
  json clock_ann_;
  uint32_t wave_ = 32, units_ = 1;
  bool line_measured_ = false, line_reported_ = false;
  std::vector<Contradiction> contradictions_;
  std::vector<std::string> gaps_, dropped_;
  std::vector<std::pair<std::string, std::string>> not_modelled_;
};

}  // namespace

GpuModel build_model(const Results& results) {
  GpuModel m = Builder(results).build();
  try {
    sim::parse_sim_config(m.description, "model.json");
  } catch (const UsageError& e) {
    throw std::logic_error(fmt::format("the model of {} is not a valid sim description: {}", results.device.id,
                                       e.what()));
  }
  return m;
}

}  // namespace gpuscope::model
