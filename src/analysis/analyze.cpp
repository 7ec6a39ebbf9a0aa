#include "analysis/analyze.hpp"

#include "analysis/cache_hierarchy.hpp"
#include "analysis/execution.hpp"

#include <fmt/format.h>

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

}  // namespace

std::vector<Finding> analyze_all(const Results& r) {
  std::vector<Finding> out;
  if (r.device.compute_units) out.push_back(reported("device.compute_units", r.device.compute_units, "", ""));
  if (r.device.clock_mhz)
    out.push_back(reported("device.clock_mhz", r.device.clock_mhz, "MHz",
                           "the driver's figure (often the maximum boost clock), not a measurement"));
  if (const Series* s = r.find_series("latency.global")) {
    auto found = hierarchy_findings(infer_cache_hierarchy(*s), s->id);
    // A caveat the probe recorded about how the curve was measured belongs
    // with the count of levels, the first line a person reads.
    if (s->meta.contains("caveat") && !found.empty()) {
      std::string& note = found.front().note;
      note = s->meta["caveat"].get<std::string>() + (note.empty() ? "" : " " + note);
    }
    out.insert(out.end(), found.begin(), found.end());
  }
  // Execution: wave width first, since waves per compute unit and the
  // register file are counted in waves.
  std::optional<double> wave_width, max_waves;
  auto add = [&out](const std::vector<Finding>& fs) { out.insert(out.end(), fs.begin(), fs.end()); };
  if (const Series* s = r.find_series("divergence.blocks")) {
    const auto fs = wave_width_findings(*s);
    if (!fs.empty() && fs.front().confidence >= 0.5) wave_width = number(fs.front());
    add(fs);
  }
  if (const Series* s = r.find_series("divergence.partition"))
    add(partition_findings({s, r.find_series("divergence.partition_pairs")}));
  if (const Series* s = r.find_series("occupancy.waves")) {
    const double w = wave_width.value_or(s->meta.value("wave_width_assumed", 0.0));
    const auto fs = max_waves_findings(*s, w);
    if (!fs.empty() && fs.front().confidence >= 0.5) max_waves = number(fs.front());
    add(fs);
  }
  if (const Series* s = r.find_series("occupancy.registers")) {
    auto fs = occupancy_findings(*s, max_waves, wave_width);
    // NVIDIA's driver states its register file (per block, which on every
    // NVIDIA GPU so far equals the SM's): set beside the measured one.
    for (auto& f : fs)
      if (f.id == "exec.registers.per_cu" && r.device.vendor_info.contains("nv_registers_per_block"))
        f.note = fmt::format("The driver reports {} registers per block (CL_DEVICE_REGISTERS_PER_BLOCK_NV).",
                             r.device.vendor_info["nv_registers_per_block"].get<double>());
    add(fs);
  }
  if (const Series* s = r.find_series("occupancy.local")) add(local_occupancy_findings(*s));
  const Series* binary = r.find_series("icache.binary");
  if (binary) add(code_bytes_findings(*binary));
  if (const Series* s = r.find_series("icache.body")) add(icache_findings(*s, binary));
  return out;
}

}  // namespace gpuscope::analysis
