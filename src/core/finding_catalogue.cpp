#include "core/finding_catalogue.hpp"

#include <regex>
#include <string_view>

namespace gpuscope {

namespace {

// One kind of finding. In `pattern` and `name`, a placeholder stands for one
// part of the id: <level> a cache level ("L1" ... or "dram"), <n> a numbered
// level ("L2"), <k> a number, <types> a matrix product's element types
// ("f16xf16->f32"), <shape> its M x N x K ("16x16x16"), and <type>, <op>,
// <mode> a word. The name
// repeats the id's placeholders, filled with what the id holds there.
struct Entry {
  std::string_view area;
  std::string_view pattern;
  std::string_view name;
  std::string_view column = {};  // memory levels' table column, with a <level> placeholder
};

constexpr std::string_view kMemory = "Memory hierarchy";
constexpr std::string_view kLocal = "Local memory and texture";
constexpr std::string_view kCompute = "Compute";
constexpr std::string_view kExec = "Execution";
constexpr std::string_view kHost = "Host and system";
constexpr std::string_view kDevice = "Device";
constexpr std::string_view kSustain = "Sustained load";
constexpr std::string_view kApp = "Applications";
constexpr std::string_view kGraphics = "Graphics";
constexpr std::string_view kOther = "Other";

// In report order: areas in the order they are printed; within an area, the
// ids' first parts in the order listed (findings sharing one keep the
// analysis' order). The first matching entry wins.
const Entry kEntries[] = {
    {kMemory, "memory.cache_levels", "cache levels"},
    {kMemory, "memory.<level>.capacity_bytes", "<level> capacity", "capacity"},
    {kMemory, "memory.<level>.latency_ns", "<level> latency", "latency"},
    {kMemory, "memory.<level>.latency_cycles", "<level> latency in cycles"},
    {kMemory, "memory.<level>.bandwidth_gbps", "<level> bandwidth", "bandwidth"},
    {kMemory, "memory.<level>.fetch_bytes", "<level> fetch size"},
    {kMemory, "memory.<level>.shared_by_cus", "<level> shared by all CUs"},
    {kMemory, "memory.dram.write_gbps", "dram write bandwidth"},
    {kMemory, "memory.dram.copy_gbps", "dram copy bandwidth"},
    {kMemory, "memory.line_bytes", "line size"},
    {kMemory, "memory.bandwidth.workgroup_period", "bandwidth work-group period"},
    {kMemory, "memory.bandwidth.saturating_workgroups", "work-groups saturating bandwidth"},
    {kMemory, "memory.tlb.reach_bytes", "tlb reach"},
    {kMemory, "memory.tlb.miss_penalty_ns", "tlb miss penalty"},
    {kMemory, "memory.tlb.miss_penalty_past_l1_ns", "tlb miss penalty past the L1"},
    {kMemory, "memory.tlb.<n>.reach_bytes", "tlb <n> reach"},
    {kMemory, "memory.tlb.<n>.miss_penalty_ns", "tlb <n> miss penalty"},
    {kMemory, "memory.tlb.page_bytes", "page size"},
    {kMemory, "memory.coalescing.misaligned_ratio", "misaligned copy vs aligned"},
    {kMemory, "memory.coalescing.stride_<k>_ratio", "stride <k> copy vs unit stride"},
    {kMemory, "memory.coalescing.segment_bytes", "memory segment"},
    {kMemory, "memory.coalescing.saturating_workgroup_size", "group size saturating copy"},

    {kLocal, "local.latency_ns", "local latency"},
    {kLocal, "local.bandwidth_gbps", "local bandwidth"},
    {kLocal, "local.capacity_bytes", "local capacity"},
    {kLocal, "local.on_chip", "local memory on chip"},
    {kLocal, "texture.cache_levels", "texture cache levels"},
    {kLocal, "texture.<n>.capacity_bytes", "texture <n> capacity"},
    {kLocal, "texture.<n>.latency_ns", "texture <n> latency"},
    {kLocal, "texture.dram.latency_ns", "texture dram latency"},
    {kLocal, "texture.bandwidth_gbps", "texture fetch bandwidth"},
    {kLocal, "texture.shares_l1", "texture shares L1"},

    {kCompute, "compute.dual_issue.fp32_fma_add", "dual issue fp32 fma + add"},
    {kCompute, "compute.dual_issue.fp32_fma_int32_add", "dual issue fp32 fma + int32 add"},
    {kCompute, "compute.matrix.<types>.<shape>.throughput_gops", "matrix <types> <shape> throughput"},
    {kCompute, "compute.matrix.<types>.<shape>.latency_ns", "matrix <types> <shape> latency"},
    {kCompute, "compute.matrix.<types>.<shape>.latency_cycles", "matrix <types> <shape> latency"},
    {kCompute, "compute.matrix.peak_vs_fp32_fma", "matrix peak vs fp32 fma"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.matches_model", "matrix <types> <shape> matches a model"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.products", "matrix <types> <shape> products"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.sum_bits", "matrix <types> <shape> internal sum bits"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.sum_rounding", "matrix <types> <shape> internal rounding"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.alignment", "matrix <types> <shape> term alignment"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.block", "matrix <types> <shape> accumulation block"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.order", "matrix <types> <shape> order in a block"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.result_rounding", "matrix <types> <shape> result rounding"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.subnormal_inputs", "matrix <types> <shape> subnormal inputs kept"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.subnormal_outputs", "matrix <types> <shape> subnormal results kept"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.overflow", "matrix <types> <shape> overflow"},
    {kCompute, "compute.matrix.<types>.<shape>.numerics.integer_overflow", "matrix <types> <shape> integer overflow"},
    {kCompute, "compute.<type>.<op>.throughput_gops", "<type> <op> throughput"},
    {kCompute, "compute.<type>.<op>.ops_per_clock_per_cu", "<type> <op> per clock per CU"},
    {kCompute, "compute.<type>.<op>.latency_ns", "<type> <op> latency"},
    {kCompute, "compute.<type>.<op>.latency_cycles", "<type> <op> latency"},
    {kCompute, "compute.<type>.<op>.rate_vs_fp32_fma", "<type> <op> rate vs fp32 fma"},

    {kExec, "exec.wave_width", "wave width"},
    {kExec, "exec.wave_width.subgroup_<k>", "wave width asking for <k>"},
    {kExec, "exec.wave_width.subgroup_<k>.as_required", "wave width <k> as asked"},
    {kExec, "exec.scheduler_partitions", "scheduler partitions"},
    {kExec, "exec.max_waves_per_cu", "waves per CU"},
    {kExec, "exec.registers.occupancy_cliffs", "register occupancy cliffs"},
    {kExec, "exec.registers.per_cu", "registers per CU"},
    {kExec, "exec.local.occupancy_cliffs_bytes", "local memory occupancy cliffs"},
    {kExec, "exec.icache_bytes", "instruction cache"},
    {kExec, "exec.icache_ops", "instruction cache ops"},
    {kExec, "exec.code_bytes_per_op", "code bytes per op"},

    {kHost, "host.h2d_gbps", "host to device"},
    {kHost, "host.d2h_gbps", "device to host"},
    {kHost, "host.map_gbps", "map bandwidth"},
    {kHost, "host.zero_copy", "zero copy"},
    {kHost, "host.svm_map_copies", "SVM map copies"},
    {kHost, "launch.dispatch_us", "launch dispatch"},
    {kHost, "launch.roundtrip_us", "launch round trip"},
    {kHost, "launch.back_to_back_us", "back-to-back launch"},
    {kHost, "sched.max_workgroups_per_cu", "work-groups per CU"},
    {kHost, "sched.max_workitems_per_cu", "work-items per CU"},
    {kHost, "sched.one_workgroup_per_cu", "one work-group per CU"},
    {kHost, "atomics.global.latency_ns", "global atomic latency"},
    {kHost, "atomics.local.latency_ns", "local atomic latency"},
    {kHost, "atomics.global.add_throughput_gops", "global atomic add throughput"},

    {kDevice, "device.compute_units", "compute units"},
    {kDevice, "device.clock_mhz", "clock (reported)"},
    {kDevice, "device.measured_clock_mhz", "clock (measured)"},

    {kSustain, "sustain.ramp_ms", "clock ramp"},
    {kSustain, "sustain.sustained_clock_mhz", "sustained clock"},
    {kSustain, "sustain.sustained_fraction", "sustained fraction of peak"},
    {kSustain, "sustain.drop_fraction", "throughput drop"},
    {kSustain, "sustain.throttling", "throttling"},
    {kSustain, "sustain.throttle_onset_s", "throttle onset"},
    {kSustain, "sustain.dvfs.clock_drops_between_launches", "clock drops between launches"},
    {kSustain, "sustain.dvfs.drop_after_gap_ms", "idle gap before a drop"},

    {kGraphics, "graphics.tile.width_px", "tile width"},
    {kGraphics, "graphics.tile.height_px", "tile height"},
    {kGraphics, "graphics.tile.order", "tile walk"},
    {kGraphics, "graphics.tile.memory_bytes", "tile memory"},
    {kGraphics, "graphics.binning", "binning"},
    {kGraphics, "graphics.rop.<format>.gpixels", "<format> fill rate"},
    {kGraphics, "graphics.rop.<format>.blend.gpixels", "<format> blended fill rate"},
    {kGraphics, "graphics.texture.<filter>.gtexels", "<filter> texture fill rate"},
    {kGraphics, "graphics.fb_compression.block_px", "framebuffer compression block"},
    {kGraphics, "graphics.transaction_elimination", "transaction elimination (experimental)"},

    {kApp, "app.lbm.<mode>.mlups", "LBM <mode>"},
    {kApp, "app.lbm.<mode>.effective_gbps", "LBM <mode> effective bandwidth"},
    {kApp, "app.lbm.<mode>.fraction_of_dram", "LBM <mode> fraction of DRAM"},
    {kApp, "app.lbm.<mode>.bound", "LBM <mode> bandwidth-bound"},
    {kApp, "app.lbm.<mode>.viscosity_rel_error", "LBM <mode> viscosity error"},
    {kApp, "app.lbm.<mode>.mass_rel_error", "LBM <mode> mass error"},
};

const std::regex kPlaceholder("<([a-z]+)>");

std::string_view placeholder_regex(std::string_view name) {
  if (name == "level") return "(L[0-9]{1,3}|dram)";
  if (name == "n") return "(L[0-9]{1,3})";
  if (name == "k") return "([0-9]+)";
  if (name == "types") return "([a-z0-9]+x[a-z0-9]+->[a-z0-9]+)";
  if (name == "shape") return "([0-9]+x[0-9]+x[0-9]+)";
  return "([a-z0-9_]+)";
}

struct Compiled {
  const Entry* entry;
  std::regex id;
  std::vector<std::string> placeholders;  // in the order they capture
  int order;                              // rank within the area
  // The pattern's text before its first placeholder and after its last:
  // an id that lacks either cannot match, and is passed over without
  // running the regex (a report of thousands of findings tries each id
  // against every pattern).
  std::string prefix, suffix;
};

std::vector<Compiled> compile() {
  std::vector<Compiled> out;
  // An area's findings are ranked by their id's first part ("host" before
  // "launch"), in the order the entries list them.
  std::string_view area, first_part;
  int order = 0;
  for (const Entry& e : kEntries) {
    const std::string_view part = e.pattern.substr(0, e.pattern.find('.'));
    if (e.area != area) order = 0;
    else if (part != first_part) ++order;
    area = e.area;
    first_part = part;
    std::string regex;
    std::vector<std::string> names;
    const std::string pattern(e.pattern);
    size_t at = 0;
    for (auto m = std::sregex_iterator(pattern.begin(), pattern.end(), kPlaceholder); m != std::sregex_iterator();
         ++m) {
      for (char c : pattern.substr(at, m->position() - at)) regex += c == '.' ? std::string("\\.") : std::string(1, c);
      regex += placeholder_regex((*m)[1].str());
      names.push_back((*m)[0].str());
      at = m->position() + m->length();
    }
    for (char c : pattern.substr(at)) regex += c == '.' ? std::string("\\.") : std::string(1, c);
    const size_t first = pattern.find('<'), last = pattern.rfind('>');
    std::string prefix = pattern.substr(0, first);
    std::string suffix = last == std::string::npos ? pattern : pattern.substr(last + 1);
    out.push_back({&e, std::regex(regex), std::move(names), order, std::move(prefix), std::move(suffix)});
  }
  return out;
}

const std::vector<Compiled>& compiled() {
  static const std::vector<Compiled> all = compile();
  return all;
}

}  // namespace

FindingDisplay describe_finding(const std::string& id) {
  for (const Compiled& c : compiled()) {
    if (!id.starts_with(c.prefix) || !id.ends_with(c.suffix)) continue;
    std::smatch m;
    if (!std::regex_match(id, m, c.id)) continue;
    FindingDisplay d;
    d.known = true;
    d.area = c.entry->area;
    d.order = c.order;
    d.name = c.entry->name;
    for (size_t i = 0; i < c.placeholders.size(); ++i) {
      const std::string value = m[i + 1].str();
      for (size_t at = d.name.find(c.placeholders[i]); at != std::string::npos;
           at = d.name.find(c.placeholders[i], at + value.size()))
        d.name.replace(at, c.placeholders[i].size(), value);
      if (c.placeholders[i] == "<level>") d.level = value;
    }
    if (!c.entry->column.empty()) d.column = c.entry->column;
    else d.level.clear();
    return d;
  }
  return FindingDisplay{id, std::string(kOther), 0, "", "", false};
}

void describe_findings(std::vector<Finding>& findings) {
  for (Finding& f : findings) f.display = describe_finding(f.id);
}

const std::vector<std::string>& area_titles() {
  static const std::vector<std::string> titles = [] {
    std::vector<std::string> out;
    for (const Entry& e : kEntries)
      if (out.empty() || out.back() != e.area) out.emplace_back(e.area);
    out.emplace_back(kOther);
    return out;
  }();
  return titles;
}

std::vector<std::string> catalogue_patterns() {
  std::vector<std::string> out;
  for (const Entry& e : kEntries) out.emplace_back(e.pattern);
  return out;
}

}  // namespace gpuscope
