#include "analysis/driver_agreement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>

namespace gpuscope::analysis {
namespace {

// The latest snapshot's fact for `key` ("end" beats "start"), with its driver.
std::pair<const DriverFact*, const DriverSnapshot*> latest(const DeviceInfo& d, const std::string& key) {
  std::pair<const DriverFact*, const DriverSnapshot*> found{nullptr, nullptr};
  for (const auto& s : d.driver)
    if (const DriverFact* f = s.find(key); f && f->value.is_number()) found = {f, &s};
  return found;
}

std::string source_of(const DriverFact& f, const DriverSnapshot& s) {
  return fmt::format("{}, {} ({})", s.driver, f.source, s.when);
}

std::string squashed_lower(const std::string& s) {
  std::string out;
  for (const unsigned char c : s)
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  return out;
}

void check_cores(const Results& r, std::vector<DriverCheck>& out) {
  const auto [cores, snap] = latest(r.device, "cores");
  if (!cores) return;
  const double claimed = cores->value.get<double>();
  const std::string claimed_text = fmt::format("{:g} ({})", claimed, source_of(*cores, *snap));
  if (r.device.compute_units) {
    const bool same = std::lround(claimed) == r.device.compute_units;
    out.push_back({"shader cores", fmt::format("{} (the API's compute units)", r.device.compute_units),
                   claimed_text, same,
                   same ? ""
                        : "the API and the kernel driver count cores differently: one may hide fused or "
                          "disabled cores, or count core groups"});
  }
  if (const auto& v = r.device.vendor_info;
      v.contains("arm_compute_units_bitfield") && v["arm_compute_units_bitfield"].is_number_unsigned()) {
    const int bits = std::popcount(v["arm_compute_units_bitfield"].get<uint64_t>());
    const bool same = std::lround(claimed) == bits;
    out.push_back(
        {"shader cores", fmt::format("{} (cl_arm_core_id's bitfield)", bits), claimed_text, same,
         same ? "" : "the OpenCL driver exposes another set of cores than the kernel driver powers"});
  }
  if (const Finding* period = r.find_finding("memory.bandwidth.workgroup_period")) {
    const double measured = number(*period);
    const bool same = std::lround(measured) == std::lround(claimed);
    out.push_back({"shader cores",
                   fmt::format("{:g} (memory.bandwidth.workgroup_period, measured)", measured), claimed_text,
                   same,
                   same ? ""
                        : "the bandwidth's period in work-groups is not the core count here: several "
                          "groups may share a core, or the driver counts cores another way"});
  }
}

void check_clock(const Results& r, std::vector<DriverCheck>& out) {
  const Finding* measured = r.find_finding("device.measured_clock_mhz");
  if (!measured) return;
  const double mhz = number(*measured);
  const std::string measured_text = fmt::format("{:.0f} MHz (device.measured_clock_mhz)", mhz);
  const auto [current, current_snap] = latest(r.device, "clock.current_mhz");
  const auto [max, max_snap] = latest(r.device, "clock.max_mhz");
  if (max) {
    const double m = max->value.get<double>();
    const bool above = mhz > m * (1 + kClockTolerance);
    out.push_back(
        {"clock", measured_text, fmt::format("at most {:.0f} MHz ({})", m, source_of(*max, *max_snap)),
         !above,
         above ? "measured faster than the driver's maximum: the ops per clock assumed to turn a rate "
                 "into a clock are too low, or the driver's table is not the clock the shaders run at"
               : ""});
  }
  if (current) {
    const double c = current->value.get<double>();
    const double rel = c > 0 ? std::abs(mhz - c) / c : INFINITY;
    const bool same = rel <= kClockTolerance;
    std::string note;
    if (!same && mhz < c)
      note =
          "measured slower than the driver's current clock: the clock changed during the run (DVFS, thermal "
          "or power limits), or the driver reports a domain other than the shaders'";
    else if (!same)
      note =
          "measured faster than the driver's current clock: read after the load, the clock had already "
          "fallen (DVFS idles quickly on phones)";
    out.push_back({"clock", measured_text,
                   fmt::format("{:.0f} MHz now ({})", c, source_of(*current, *current_snap)), same, note});
  }
}

void check_model(const Results& r, std::vector<DriverCheck>& out) {
  std::vector<std::string> seen;  // one check per driver: the start and end snapshots name the same chip
  for (const auto& s : r.device.driver) {
    const DriverFact* model = s.find("model");
    if (!model || !model->value.is_string() || std::find(seen.begin(), seen.end(), s.driver) != seen.end())
      continue;
    seen.push_back(s.driver);
    const std::string a = squashed_lower(model->value.get<std::string>()), b = squashed_lower(r.device.name);
    const bool same =
        !a.empty() && !b.empty() && (a.find(b) != std::string::npos || b.find(a) != std::string::npos);
    out.push_back({"model", r.device.name + " (the API's device name)",
                   fmt::format("{} ({}, {})", model->value.get<std::string>(), s.driver, model->source), same,
                   same ? ""
                        : "the API and the driver name the chip differently (a marketing name against a "
                          "product code, or another device)"});
  }
}

// A number the Vulkan snapshot holds for `key`, with its claimed text.
struct VulkanFact {
  double value = 0;
  std::string text;
};
std::optional<VulkanFact> vulkan_fact(const DriverSnapshot& s, const std::string& key) {
  const DriverFact* f = s.find(key);
  if (!f || !f->value.is_number()) return std::nullopt;
  const double v = f->value.get<double>();
  return VulkanFact{v, fmt::format("{:g} (vulkan, {})", v, f->source)};
}

void check_vulkan(const Results& r, const DriverSnapshot& s, std::vector<DriverCheck>& out) {
  // Cores: the active count where the driver gives one (AMD), else the count.
  auto cores = vulkan_fact(s, "shader_core.active_count");
  if (!cores) cores = vulkan_fact(s, "shader_core.count");
  if (const Finding* period = r.find_finding("memory.bandwidth.workgroup_period"); cores && period) {
    const double measured = number(*period);
    const bool same = std::lround(measured) == std::lround(cores->value);
    out.push_back(
        {"shader cores", fmt::format("{:g} (memory.bandwidth.workgroup_period, measured)", measured),
         cores->text, same,
         same ? ""
              : "the bandwidth's period in work-groups is not the core count here: several groups may "
                "share a core, or the driver counts cores another way"});
  }
  if (const auto warps = vulkan_fact(s, "shader_core.warps_per_core")) {
    if (const Finding* waves = r.find_finding("exec.max_waves_per_cu")) {
      const double measured = number(*waves);
      const bool same = std::lround(measured) == std::lround(warps->value);
      std::string note;
      if (!same && measured < warps->value)
        note =
            "fewer waves stayed resident than the driver's slots: registers, local memory or work-group "
            "slots bound the probe's kernel first";
      else if (!same)
        note =
            "more waves stayed resident than the driver's slots: the driver counts slots per partition "
            "(a SIMD or a sub-core), not per core";
      out.push_back({"resident waves per core",
                     fmt::format("{:g} (exec.max_waves_per_cu, measured)", measured), warps->text, same,
                     note});
    }
  }
  if (const Finding* width = r.find_finding("exec.wave_width")) {
    const double measured = number(*width);
    const std::string measured_text = fmt::format("{:g} (exec.wave_width, measured)", measured);
    if (const auto size = vulkan_fact(s, "subgroup.size")) {
      const auto lo = vulkan_fact(s, "subgroup.min_size"), hi = vulkan_fact(s, "subgroup.max_size");
      const bool same = std::lround(measured) == std::lround(size->value);
      const bool in_range = lo && hi && measured >= lo->value && measured <= hi->value;
      std::string note;
      if (!same && in_range)
        note = fmt::format(
            "within the driver's subgroup sizes {:g} to {:g}: the compiler ran the probe's kernels "
            "at another size than the one it reports",
            lo->value, hi->value);
      else if (!same)
        note =
            "outside the sizes the driver reports: divergence follows another width than the subgroup "
            "(lanes issued in smaller groups, or a subgroup that spans several hardware waves)";
      out.push_back({"wave width", measured_text, size->text, same, note});
    }
    if (const auto wave = vulkan_fact(s, "shader_core.wave_width")) {
      const bool same = std::lround(measured) == std::lround(wave->value);
      out.push_back(
          {"wave width", measured_text, wave->text, same,
           same ? ""
                : "the driver's wavefront size is the hardware's widest; the compiler ran the probe's "
                  "kernels narrower (RDNA's wave32)"});
    }
  }
  const auto fma = vulkan_fact(s, "shader_core.fma_per_clock");
  const Finding* throughput = r.find_finding("compute.fp32.fma.throughput_gops");
  if (fma && cores && throughput) {
    const Finding* measured_clock = r.find_finding("device.measured_clock_mhz");
    const double mhz = measured_clock ? number(*measured_clock) : r.device.clock_mhz;
    if (mhz > 0) {
      // One operation an FMA, as the throughput finding counts them (its
      // series' flop_per_op says 2 FLOPs).
      const double claimed = fma->value * cores->value * mhz / 1e3;
      const double measured = number(*throughput);
      const double ratio = measured / claimed;
      const bool same = std::abs(ratio - 1) <= kFmaRateTolerance;
      std::string note;
      if (!same && ratio < 1)
        note = fmt::format(
            "{:.0f}% of the driver's rate: the clock fell during the FMA test (DVFS, thermal), or "
            "the kernels do not reach the core's issue rate",
            100 * ratio);
      else if (!same)
        note = fmt::format(
            "{:.0f}% of the driver's rate: the clock it is counted at is below the one the shaders "
            "ran at, or the driver's rate is not per core",
            100 * ratio);
      out.push_back(
          {"fp32 fma rate",
           fmt::format("{:.4g} Gop/s (compute.fp32.fma.throughput_gops, measured)", measured),
           fmt::format("{:.4g} Gop/s = {:g} FMA per clock x {:g} cores x {:.0f} MHz ({}; the clock {})",
                       claimed, fma->value, cores->value, mhz, fma->text,
                       measured_clock ? "measured" : "the API reports"),
           same, note});
    }
  }
}

}  // namespace

std::vector<DriverCheck> check_driver_facts(const Results& r) {
  std::vector<DriverCheck> out;
  check_model(r, out);
  check_cores(r, out);
  check_clock(r, out);
  for (const auto& s : r.device.driver)
    if (s.driver == "vulkan") {
      check_vulkan(r, s, out);
      break;  // one snapshot: the properties do not change during a run
    }
  return out;
}

}  // namespace gpuscope::analysis
