// The model builder's reading of findings (model_reading.hpp).
#include "model/model_reading.hpp"

#include "backends/sim/sim_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <set>

namespace gpuscope::model::detail {

// The ops the sim's compute family times (family_compute.cpp): the basic
// four, the special functions and their native forms, integer division and
// conversion. Findings of other ops (dp4a through inline PTX) have no sim
// kernel to replay them on.
bool sim_models_op(const std::string& op) {
  static const std::set<std::string> kOps = {"add", "mul", "fma", "mad", "div", "sqrt", "rsqrt",
                                             "exp", "log", "sin", "cvt", "divide"};
  if (op.rfind("native_", 0) == 0) return kOps.count(op.substr(7)) > 0;
  return kOps.count(op) > 0;
}

uint64_t round_to_multiple(double x, uint64_t unit) {
  const double n = std::max(1.0, std::round(x / static_cast<double>(unit)));
  return static_cast<uint64_t>(n) * unit;
}

uint32_t clamp_u32(double x, uint32_t lo, uint32_t hi) {
  if (!std::isfinite(x)) return lo;
  return static_cast<uint32_t>(std::clamp(std::llround(x), static_cast<long long>(lo), static_cast<long long>(hi)));
}

uint32_t power_of_two_at_least(double x, uint32_t lo, uint32_t hi) {
  const uint32_t v = clamp_u32(x, lo, hi);
  return std::min(hi, std::bit_ceil(v));
}

// The cache levels one path's findings name ("memory" or "texture"), nearest
// first, in the order of their numbers; a level missing its capacity or its
// latency is left out (a sim level needs both) and said in `dropped`.
std::vector<Level> read_levels(const FindingIndex& fx, const std::string& prefix, std::vector<std::string>& dropped) {
  std::vector<Level> out;
  for (int i = 1; i <= static_cast<int>(sim::kSimMaxCacheLevels); ++i) {
    const std::string base = fmt::format("{}.L{}", prefix, i);
    const auto cap = fx.positive(base + ".capacity_bytes");
    const auto lat = fx.positive(base + ".latency_ns");
    if (!cap && !lat) break;
    if (!cap || !lat) {
      dropped.push_back(fmt::format("{}: {} only; a sim level needs both its capacity and its latency", base,
                                    cap ? "capacity" : "latency"));
      continue;
    }
    Level l;
    l.name = fmt::format("L{}", i);
    l.capacity_bytes = *cap;
    l.latency_ns = *lat;
    l.bandwidth_gbps = fx.positive(base + ".bandwidth_gbps");
    if (auto fb = fx.positive(base + ".fetch_bytes")) l.fetch_bytes = clamp_u32(*fb, 4, 4096);
    l.shared = fx.flag(base + ".shared_by_cus");
    l.confidence = std::min(fx.confidence(base + ".capacity_bytes"), fx.confidence(base + ".latency_ns"));
    l.capacity_ids = {base + ".capacity_bytes"};
    l.latency_ids = {base + ".latency_ns"};
    out.push_back(std::move(l));
  }
  return out;
}

// Rule `outward-growth`: a path's levels grow in capacity and latency
// outwards (the sim's reader refuses anything else). Walking outwards, a
// level that is not larger and slower than the last one kept contradicts
// it; of the two, the reading with the higher confidence stays.
std::vector<Level> keep_growing(std::vector<Level> levels, const std::string& prefix,
                                std::vector<Contradiction>& contradictions) {
  std::vector<Level> kept;
  for (auto& l : levels) {
    if (kept.empty()) {
      kept.push_back(std::move(l));
      continue;
    }
    Level& prev = kept.back();
    const bool larger = l.capacity_bytes > prev.capacity_bytes;
    const bool slower = l.latency_ns > prev.latency_ns;
    if (larger && slower) {
      kept.push_back(std::move(l));
      continue;
    }
    Contradiction c;
    c.field = prefix == "texture" ? "memory.caches (texture path)" : "memory.caches (load path)";
    c.findings = {prev.capacity_ids[0], prev.latency_ids[0], l.capacity_ids[0], l.latency_ids[0]};
    const std::string why = !larger && !slower ? "neither larger nor slower than"
                            : !larger          ? "not larger than"
                                               : "not slower than";
    const bool later_wins = l.confidence > prev.confidence;
    c.resolution = fmt::format(
        "{}.{} ({:.0f} B, {:.3g} ns) is {} {}.{} ({:.0f} B, {:.3g} ns) before it; kept {} (confidence {:.2f} "
        "against {:.2f}), left the other out",
        prefix, l.name, l.capacity_bytes, l.latency_ns, why, prefix, prev.name, prev.capacity_bytes,
        prev.latency_ns, later_wins ? l.name : prev.name, std::max(l.confidence, prev.confidence),
        std::min(l.confidence, prev.confidence));
    contradictions.push_back(std::move(c));
    if (later_wins) {
      kept.pop_back();
      // The winner must still grow past the level before the one it replaced.
      if (!kept.empty() && (l.capacity_bytes <= kept.back().capacity_bytes || l.latency_ns <= kept.back().latency_ns))
        continue;
      kept.push_back(std::move(l));
    }
  }
  return kept;
}

}  // namespace gpuscope::model::detail
