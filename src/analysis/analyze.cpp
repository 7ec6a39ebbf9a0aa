#include "analysis/analyze.hpp"

#include "analysis/application.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/cache_geometry.hpp"
#include "analysis/cache_hierarchy.hpp"
#include "analysis/coalescing.hpp"
#include "analysis/compute.hpp"
#include "analysis/confidence_factors.hpp"
#include "analysis/execution.hpp"
#include "analysis/graphics.hpp"
#include "analysis/matrix.hpp"
#include "analysis/matrix_numerics.hpp"
#include "analysis/system.hpp"
#include "analysis/texture.hpp"
#include "analysis/tlb.hpp"
#include "analysis/unfound.hpp"
#include "core/error.hpp"
#include "core/finding_catalogue.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <set>

namespace gpuscope::analysis {

namespace {

Finding reported(const std::string& id, double value, const std::string& unit, const std::string& note) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.confidence = 1.0;
  f.method = "reported by the driver";
  f.note = note;
  return f;
}

// A pointer chase cannot tell a TLB running out of reach from a cache
// running out of capacity: both are a step in its staircase (the seeds'
// Adreno 530: 266 ns up to 16 MB, over 500 ns at 256 MB). The tlb probe's
// page-strided chases see translation alone; where they measured a reach, a
// step that starts near it or beyond is translation and the plateau before
// it is DRAM. Near: a random chase over F bytes misses a TLB of reach R on
// 1 - R/F of its loads, so its rise starts at R; 0.7 R leaves room for the
// departure's interpolation. A step larger than the measured miss penalties
// can explain is a cache running out all the same (a CPU's L2 and L3 lie
// past its first-level TLB's 256 KiB reach). A real cache that large, no
// larger than the reach and no slower than a TLB miss is possible, and
// would then be read as DRAM: the note says why.
HierarchyOptions hierarchy_options(const std::vector<Finding>& tlb) {
  HierarchyOptions o;
  const auto find = [&](const std::string& id) { return find_finding(tlb, id); };
  for (const std::string level : {"", "L2.", "L3.", "L4."}) {
    const Finding* reach = find("memory.tlb." + level + "reach_bytes");
    const Finding* penalty = find("memory.tlb." + level + "miss_penalty_ns");
    if (!reach || !penalty || !reach->low || !reach->high || reach->confidence < kPassOnConfidence) continue;
    const Finding* past = level.empty() ? find("memory.tlb.miss_penalty_past_l1_ns") : nullptr;
    o.translation_levels.push_back({*reach->low, number(*penalty), number(*reach),
                                    std::min(reach->confidence, penalty->confidence),
                                    past && number(*past) >= 0.7 * number(*penalty)});
    const double threshold = kTranslationOnsetOfReach * *reach->low;
    if (threshold < o.translation_threshold_bytes) {
      o.translation_threshold_bytes = threshold;
      o.translation_basis = fmt::format("{:g}x the {:.1f} MiB the tlb probe measured before its TLB reach",
                                        kTranslationOnsetOfReach, *reach->low / 1048576);
    }
  }
  return o;
}

// Why a value of a series breaks analyze.hpp's promises, or "" when it does not.
std::string value_problem(double v) {
  if (!std::isfinite(v)) return fmt::format("{} is not a finite number", v);
  if (v < 0) return fmt::format("{} is negative", v);
  if (v > kMaxSeriesValue) return fmt::format("{:g} is larger than {:g}", v, kMaxSeriesValue);
  return "";
}

std::string series_problem(const Series& s) {
  const size_t max_points = s.id.starts_with("graphics.raster.") ? kMaxTracePoints : kMaxSeriesPoints;
  if (s.points.size() > max_points) return fmt::format("{} points, more than {}", s.points.size(), max_points);
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    const std::string at = fmt::format("points[{}]", i);
    if (const std::string x = value_problem(p.x); !x.empty()) return fmt::format("{}.x: {}", at, x);
    if (const std::string y = value_problem(p.y); !y.empty()) return fmt::format("{}.y: {}", at, y);
    if (i > 0 && p.x <= s.points[i - 1].x)
      return fmt::format("{}.x: {:g} does not follow {:g} (x must increase)", at, p.x, s.points[i - 1].x);
    if (p.samples.size() > kMaxPointSamples)
      return fmt::format("{}.samples: {} of them, more than {}", at, p.samples.size(), kMaxPointSamples);
    for (size_t k = 0; k < p.samples.size(); ++k)
      if (const std::string v = value_problem(p.samples[k]); !v.empty())
        return fmt::format("{}.samples[{}]: {}", at, k, v);
  }
  return "";
}

std::vector<Finding> analyze_usable(const Results& r);
void expected_gaps(const Results& r, const std::vector<Finding>& found);

}  // namespace

std::vector<Skipped> unusable_series(const Results& r) {
  std::vector<Skipped> out;
  std::set<std::string> ids;
  for (const Series& s : r.series) {
    std::string problem = series_problem(s);
    if (problem.empty() && !ids.insert(s.id).second) problem = "an earlier series has the same id";
    if (!problem.empty()) out.push_back({s.probe, fmt::format("series {} not analysed: {}", s.id, problem)});
  }
  return out;
}

std::vector<Finding> analyze_all(const Results& r) { return analyze_with_gaps(r).findings; }

Analysis analyze_with_gaps(const Results& r) {
  UnfoundCollector collector;
  Analysis a;
  const std::vector<Skipped> unusable = unusable_series(r);
  const Results* usable = &r;
  Results screened;
  if (!unusable.empty()) {
    screened.device = r.device;
    std::set<std::string> ids;
    for (const Series& s : r.series)
      if (series_problem(s).empty() && ids.insert(s.id).second) screened.series.push_back(s);
    usable = &screened;
  }
  try {
    a.findings = analyze_usable(*usable);
    describe_findings(a.findings);
    expected_gaps(*usable, a.findings);
    a.unfound = collector.take(a.findings);
    return a;
  } catch (const nlohmann::json::exception& e) {
    // Series meta is free-form JSON; a value of the wrong type in it is bad input.
    const std::string what = e.what();
    const auto tag_end = what.find("] ");
    throw UsageError(fmt::format("a series' meta holds a value analysis cannot read: {}",
                                 printable(tag_end == std::string::npos ? what : what.substr(tag_end + 2))));
  }
}

namespace {

void add(std::vector<Finding>& out, const std::vector<Finding>& found) {
  out.insert(out.end(), found.begin(), found.end());
}

// The tlb probe's findings, read first: its reach tells the staircases
// which step is translation. The latency probe's chase (one load per line,
// every page of its footprint) sees translation too: it bounds the
// penalty, and its curve is set against the reach measured here.
std::vector<Finding> tlb_stage(const Results& r) {
  std::vector<Finding> tlb_found;
  const Series* control = r.find_series("tlb.control");
  if (!control) return tlb_found;
  std::vector<const Series*> strided;
  for (const auto& s : r.series)
    if (s.id.rfind("tlb.stride_", 0) == 0) strided.push_back(&s);
  const Series* lat = r.find_series("latency.global");
  tlb_found = tlb_findings(*control, strided, lat);
  if (lat) hold_tlb_levels_to_chase(tlb_found, *lat);
  for (auto& f : tlb_found)
    if (f.id == "memory.tlb.reach_bytes" && lat && lat->points.size() >= 2) {
      const double reach = number(f);
      const Point* at = nullptr;
      for (const auto& p : lat->points)
        if (p.x <= reach) at = &p;
      const Point& last = lat->points.back();
      if (at && last.x > reach)
        f.note += fmt::format(
            " latency.global rises {:+.1f}% from this reach ({:.1f} ns) to its largest footprint "
            "({:.0f} MiB, {:.1f} ns): a random chase over F bytes misses a TLB of reach R on "
            "about 1 - R/F of its loads.",
            100 * (last.y / at->y - 1), at->y, last.x / 1048576, last.y);
    }
  return tlb_found;
}

// The load/store staircase, read once: its findings, the bandwidth probe's
// levels and the texture path's DRAM hint all come from it.
struct LoadPath {
  const Series* latency = nullptr;  // latency.global
  std::optional<Hierarchy> levels;
  std::vector<Finding> level_findings;  // as findings, before the notes added for the run
  HierarchyOptions staircase;           // the options every chase's staircase starts from
  bool cpu = false;
  // A staircase's options for a chase series: with its slots' spacing.
  HierarchyOptions chased(const Series& s) const {
    HierarchyOptions o = staircase;
    o.slot_bytes = s.meta.value("stride_bytes", 0.0);
    o.split_caches = !cpu;
    return o;
  }
};

LoadPath read_load_path(const Results& r, const std::vector<Finding>& tlb_found) {
  LoadPath p;
  p.staircase = hierarchy_options(tlb_found);
  p.cpu = r.device.type == "cpu";
  p.latency = r.find_series("latency.global");
  if (!p.latency) return p;
  p.levels = infer_cache_hierarchy(*p.latency, p.chased(*p.latency));
  p.level_findings = hierarchy_findings(*p.levels, p.latency->id);
  return p;
}

// The load path's levels as findings: a caveat the probe recorded about how
// the curve was measured belongs with the count of levels, the first line
// a person reads; which chase ran (address or index) with every finding's
// method.
void add_load_levels(const LoadPath& loads, std::vector<Finding>& out) {
  const Series* s = loads.latency;
  if (!s) return;
  auto found = loads.level_findings;
  if (s->meta.contains("caveat") && !found.empty()) {
    std::string& note = found.front().note;
    note = s->meta["caveat"].get<std::string>() + (note.empty() ? "" : " " + note);
  }
  if (s->meta.contains("chase_method"))
    for (auto& f : found) f.method += " " + s->meta["chase_method"].get<std::string>();
  add(out, found);
}

// Bandwidth per level (matched to the load path's levels), work-groups,
// local memory.
void add_bandwidth(const Results& r, const LoadPath& loads, std::vector<Finding>& out) {
  if (const Series* read = r.find_series("bandwidth.read")) {
    // The other layouts the probe measures at its largest footprint: DRAM's
    // rates are the best layout's.
    std::vector<const Series*> layouts;
    for (const char* id : {"bandwidth.stream.read", "bandwidth.stream.write", "bandwidth.stream.copy",
                           "bandwidth.grid.write", "bandwidth.grid.copy"})
      if (const Series* s = r.find_series(id)) layouts.push_back(s);
    add(out, bandwidth_findings(read, r.find_series("bandwidth.write"), r.find_series("bandwidth.copy"),
                                loads.levels ? &*loads.levels : nullptr, loads.latency ? loads.latency->id : "",
                                layouts));
  }
  if (const Series* wg = r.find_series("bandwidth.workgroups")) add(out, workgroup_findings(*wg));
  add(out, local_findings(r.find_series("local.latency"), r.find_series("local.global_latency"),
                          r.find_series("local.bandwidth"), r.find_series("local.global_bandwidth"),
                          r.find_series("local.capacity")));
}

// Texture path: its own staircase, its bandwidth, and whether it shares
// the load/store path's first-level cache (analysis/texture.hpp).
void add_texture(const Results& r, const LoadPath& loads, std::vector<Finding>& out) {
  if (const Series* s = r.find_series(kTextureLatencySeries)) {
    // Devices whose images are small (Bifrost's 1D textures stop at 1 MiB)
    // end the texture sweep before it can tell DRAM from a cache: the load
    // path's DRAM latency, when measured, tells.
    HierarchyOptions texture_staircase = loads.chased(*s);
    // The 2D path makes every pixel a slot, several to a line.
    texture_staircase.slots_share_lines = s->meta.value("image", std::string()).rfind("image2d", 0) == 0;
    if (loads.levels && loads.levels->dram && loads.levels->dram->latency_confidence >= kPassOnConfidence) {
      texture_staircase.dram_latency_hint_ns = loads.levels->dram->latency_ns;
      texture_staircase.dram_hint_basis = "on the load/store path (memory.dram.latency_ns)";
    }
    auto found = texture_hierarchy_findings(infer_cache_hierarchy(*s, texture_staircase), s->id);
    share_level_capacities(found, loads.level_findings);
    hold_texture_levels_to_loads(found, loads.level_findings);
    add(out, found);
  }
  if (const Series* s = r.find_series(kTextureBandwidthSeries)) add(out, texture_bandwidth_findings(*s));
  const Series* pair_small = r.find_series(kTexturePairSmallSeries);
  const Series* pair_large = r.find_series(kTexturePairLargeSeries);
  if (pair_small && pair_large && pair_large->meta.contains("texture_bytes")) {
    const double first_level = pair_large->meta.value("texture_first_level_bytes", 0.0);
    const auto sharing = infer_texture_sharing(*pair_small, *pair_large,
                                               pair_large->meta["texture_bytes"].get<double>(), first_level);
    add(out, texture_sharing_findings(sharing, pair_small->id, pair_large->id));
  }
}

// Cache geometry: line sizes, shared levels, fill units; told how many
// levels the staircase read.
void add_geometry(const Results& r, std::vector<Finding>& out) {
  std::vector<const Series*> lines;
  const Series* lone = r.find_series("geometry.shared_1");
  const Series* all = nullptr;
  for (const auto& s : r.series) {
    if (s.id.rfind("geometry.line_", 0) == 0) lines.push_back(&s);
    if (s.id.rfind("geometry.shared_", 0) == 0 && &s != lone) all = &s;
  }
  int levels = 0;
  for (const auto& f : out)
    if (f.id == "memory.cache_levels") levels = static_cast<int>(number(f));
  add(out, geometry_findings(r.find_series("geometry.pairs_near"), r.find_series("geometry.pairs_mid"),
                             r.find_series("geometry.pairs_far"), lines, lone, all, levels, r.device.type == "cpu"));
}

// Execution: wave width first, since waves per compute unit and the
// register file are counted in waves.
void add_execution(const Results& r, std::vector<Finding>& out) {
  std::optional<double> wave_width, max_waves;
  if (const Series* s = r.find_series("divergence.blocks")) {
    const auto fs = wave_width_findings(*s);
    if (!fs.empty() && fs.front().confidence >= kPassOnConfidence) wave_width = number(fs.front());
    add(out, fs);
  }
  for (const Series& s : r.series)
    if (s.id.starts_with("divergence.blocks.subgroup_")) add(out, required_wave_width_findings(s));
  if (const Series* s = r.find_series("divergence.partition"))
    add(out, partition_findings(
                 {s, r.find_series("divergence.partition_pairs"), r.find_series("divergence.partition_triples")}));
  if (const Series* s = r.find_series("occupancy.waves")) {
    const double w = wave_width.value_or(s->meta.value("wave_width_assumed", 0.0));
    const auto fs = max_waves_findings(*s, w, r.device.type == "cpu");
    if (!fs.empty() && fs.front().confidence >= kPassOnConfidence) max_waves = number(fs.front());
    add(out, fs);
  }
  if (const Series* s = r.find_series("occupancy.registers")) {
    auto fs = occupancy_findings(*s, max_waves, wave_width);
    // NVIDIA's driver states its register file (per block, which on every
    // NVIDIA GPU so far equals the SM's): set beside the measured one.
    for (auto& f : fs)
      if (f.id == "exec.registers.per_cu" && r.device.vendor_info.contains("nv_registers_per_block"))
        f.note = fmt::format("The driver reports {} registers per block (CL_DEVICE_REGISTERS_PER_BLOCK_NV).",
                             r.device.vendor_info["nv_registers_per_block"].get<double>());
    add(out, fs);
  }
  if (const Series* s = r.find_series("occupancy.local")) add(out, local_occupancy_findings(*s));
  const Series* binary = r.find_series("icache.binary");
  if (binary) add(out, code_bytes_findings(*binary));
  if (const Series* s = r.find_series("icache.body")) add(out, icache_findings(*s, binary));
}

// What is read of a level (its bandwidth, sharing, fill unit) is no surer
// than that the level is there, which its latency finding's confidence
// weighs.
void hold_level_readings_to_their_latency(std::vector<Finding>& out) {
  for (auto& f : out) {
    const auto dot = f.id.find('.', f.id.find('.') + 1);
    if (dot == std::string::npos || f.id.rfind("memory.L", 0) != 0 || f.id.ends_with(".latency_ns")) continue;
    const std::string level = f.id.substr(0, dot);
    for (const auto& g : out)
      if (g.id == level + ".latency_ns") f.confidence = std::min(f.confidence, g.confidence);
  }
}

// The readers in their order (docs/inference.md 1): each stage may read
// what the ones before it found.
std::vector<Finding> analyze_usable(const Results& r) {
  std::vector<Finding> out;
  if (r.device.compute_units) out.push_back(reported("device.compute_units", r.device.compute_units, "", ""));
  if (r.device.clock_mhz)
    out.push_back(reported("device.clock_mhz", r.device.clock_mhz, "MHz",
                           "the driver's figure (often the maximum boost clock), not a measurement"));
  const std::vector<Finding> tlb_found = tlb_stage(r);
  const LoadPath loads = read_load_path(r, tlb_found);
  add_load_levels(loads, out);
  add_bandwidth(r, loads, out);
  add_texture(r, loads, out);
  add(out, coalescing_findings(r.find_series("coalescing.workgroup"), r.find_series("coalescing.offset"),
                               r.find_series("coalescing.stride")));
  add(out, tlb_found);
  add_geometry(r, out);
  for (auto* family : {transfer_findings, launch_findings, atomics_findings, scheduling_findings, clock_findings})
    add(out, family(r));
  add(out, compute_findings(r));
  // Levels' latencies in cycles, once the clock has been measured.
  add(out, level_cycle_findings(r, out));
  add_execution(r, out);
  hold_level_readings_to_their_latency(out);
  add(out, matrix_findings(r, out));
  add(out, matrix_numerics_findings(r));
  add(out, lbm_findings(r, out));
  add(out, sustain_findings(r));
  add(out, graphics_findings(r));
  return out;
}

// The findings every run with the series behind them should give: each
// one absent gets a reason. Where an analysis said why (note_unfound) that
// reason stands; otherwise the one here names the series and what it lacked.
void expected_gaps(const Results& r, const std::vector<Finding>& found) {
  std::set<std::string> have;
  for (const auto& f : found) have.insert(f.id);
  const auto expect = [&](const std::string& id, const char* series, const std::string& why) {
    if (have.count(id)) return;
    if (!r.find_series(series))
      note_unfound(id, fmt::format("no {} series in the results (its probe was not run or was skipped)", series));
    else
      note_unfound(id, why, {series});
  };
  int levels = 0, texture_levels = 0;
  for (const auto& f : found) {
    if (f.id == "memory.cache_levels") levels = static_cast<int>(number(f));
    if (f.id == "texture.cache_levels") texture_levels = static_cast<int>(number(f));
  }
  expect("memory.cache_levels", "latency.global", "the latency curve has no plateau the staircase fit accepts");
  expect("memory.dram.latency_ns", "latency.global",
         "the latency curve does not reach a last plateau past every cache within its sweep");
  for (int n = 1; n <= levels; ++n) {
    const std::string l = fmt::format("memory.L{}.", n);
    expect(l + "capacity_bytes", "latency.global", "the staircase found the level but no edge where it runs out");
    expect(l + "latency_ns", "latency.global", "the staircase found no plateau for this level");
    expect(l + "bandwidth_gbps", "bandwidth.read",
           "the bandwidth sweep has no footprint that lies inside this level alone");
    if (n == 2 && levels >= 3 && !r.find_series("geometry.pairs_mid") && r.find_series("geometry.pairs_near"))
      expect(
          l + "fetch_bytes", "geometry.pairs_near",
          "no mid pairs were run (the sharing sweep's lone chase shows no third level ending within it, or "
          "the sweep did not run): the near pairs tell the first level's fill and the far ones the last's");
    else
      expect(l + "fetch_bytes", n == 2 && levels >= 3 ? "geometry.pairs_mid" : "geometry.pairs_near",
             "the paired-load experiment gave no step that tells this level's fill unit");
    std::string not_run;
    for (const auto& s : r.series)
      if (s.probe == "geometry" && s.meta.contains("sharing_not_run") && s.meta["sharing_not_run"].is_string())
        not_run = s.meta["sharing_not_run"].get<std::string>();
    if (!r.find_series("geometry.shared_1") && !not_run.empty())
      note_unfound(l + "shared_by_cus", not_run);
    else
      expect(l + "shared_by_cus", "geometry.shared_1",
             "the sharing sweep has no footprint per group that fits this level alone and overflows it together");
  }
  if (levels > 0) {
    bool any_line = false;
    for (const auto& s : r.series) any_line = any_line || s.id.rfind("geometry.line_", 0) == 0;
    if (!have.count("memory.line_bytes"))
      note_unfound("memory.line_bytes",
                   any_line ? "the line-stride chases give no capacity ratio that names one line size"
                            : "no geometry.line_* series in the results (the geometry probe was not run or skipped)");
  }
  expect("texture.cache_levels", kTextureLatencySeries,
         "the texture latency curve has no plateau the staircase fit accepts");
  for (int n = 1; n <= texture_levels; ++n) {
    const std::string l = fmt::format("texture.L{}.", n);
    expect(l + "capacity_bytes", kTextureLatencySeries,
           "the staircase found the level but no edge where it runs out");
    expect(l + "latency_ns", kTextureLatencySeries, "the staircase found no plateau for this level");
  }
  if (!have.count("texture.shares_l1")) {
    const Series* lat = r.find_series(kTextureLatencySeries);
    if (lat && lat->meta.contains("sharing_skipped") && lat->meta["sharing_skipped"].is_string())
      note_unfound("texture.shares_l1", lat->meta["sharing_skipped"].get<std::string>(), {lat->id});
    else
      expect("texture.shares_l1", kTexturePairLargeSeries,
             "the texture and global chains' rounds neither stayed apart nor crowded each other out clearly "
             "enough to decide");
  }
  expect("memory.tlb.reach_bytes", "tlb.control", "no strided chase rose above the control within the sweep");
  {
    const Finding* reach = nullptr;
    for (const auto& f : found)
      if (f.id == "memory.tlb.reach_bytes") reach = &f;
    expect("memory.tlb.miss_penalty_ns", "tlb.control",
           reach && !reach->high ? "the reach is only a lower bound (translation stayed cached over the whole "
                                   "sweep): no miss was timed"
                                 : "no strided chase settled on a plateau past the reach to read the penalty from");
  }
  expect("memory.dram.bandwidth_gbps", "bandwidth.read",
         "the bandwidth sweep has no footprint past every cache level the latency probe found");
  expect("memory.coalescing.segment_bytes", "coalescing.stride",
         "the stride curve does not level off at one segment size within the strides measured");
  expect("host.h2d_gbps", "transfer.h2d.pinned", "the host-to-device copies give no size at which the rate settles");
  expect("host.d2h_gbps", "transfer.d2h.pinned", "the device-to-host copies give no size at which the rate settles");
  expect("host.zero_copy", "transfer.map.host.to_host",
         "the map costs and the kernel's reads of a mapped buffer do not decide it");
  expect("exec.wave_width", "divergence.blocks", "no block size split the work-items into faster and slower runs");
  expect("exec.max_waves_per_cu", "occupancy.waves", "the residency search did not bracket the limit");
  expect("exec.icache_bytes", "icache.body", "no loop body size slowed the loop down within the sweep");
  expect("sched.max_workgroups_per_cu", "sched.by_wg_size", "the residency curve names no limit");
}

}  // namespace

}  // namespace gpuscope::analysis
