// The model builder's reading of findings (model_builder.cpp): annotated
// values, findings looked up by id, and a path's cache levels as the
// findings give them, with the rule that keeps them growing outwards.
#pragma once

#include "core/finding.hpp"
#include "model/model_builder.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::model::detail {

using nlohmann::json;

class Annotator {
 public:
  json measured(json value, const std::vector<std::string>& ids) {
    ++counts_[0];
    std::string src;
    for (const auto& id : ids) src += (src.empty() ? "" : ", ") + id;
    return {{"value", std::move(value)}, {"basis", "measured"}, {"source", src}};
  }
  json reported(json value, const std::string& what) {
    ++counts_[1];
    return {{"value", std::move(value)}, {"basis", "spec"}, {"source", "driver: " + what}};
  }
  json assumed(json value, const std::string& why) {
    ++counts_[2];
    return {{"value", std::move(value)}, {"basis", "assumed"}, {"note", why}};
  }
  size_t count(int basis) const { return counts_[basis]; }

 private:
  size_t counts_[3] = {0, 0, 0};
};

// The findings by id, looked up once each (a run has hundreds).
class FindingIndex {
 public:
  explicit FindingIndex(const std::vector<Finding>& findings) {
    for (const auto& f : findings) by_id_.emplace(f.id, &f);
  }
  const Finding* get(const std::string& id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }
  // A finite number (a bool as 0/1) for `id`, or nothing.
  std::optional<double> number(const std::string& id) const {
    const Finding* f = get(id);
    if (!f) return std::nullopt;
    if (const auto* d = std::get_if<double>(&f->value)) {
      if (!std::isfinite(*d)) return std::nullopt;
      return *d;
    }
    if (const auto* b = std::get_if<bool>(&f->value)) return *b ? 1.0 : 0.0;
    return std::nullopt;
  }
  std::optional<double> positive(const std::string& id) const {
    auto v = number(id);
    if (!v || *v <= 0) return std::nullopt;
    return v;
  }
  std::optional<bool> flag(const std::string& id) const {
    const Finding* f = get(id);
    if (!f) return std::nullopt;
    if (const auto* b = std::get_if<bool>(&f->value)) return *b;
    return std::nullopt;
  }
  double confidence(const std::string& id) const {
    const Finding* f = get(id);
    return f ? f->confidence : 0;
  }
  const std::map<std::string, const Finding*>& all() const { return by_id_; }

 private:
  std::map<std::string, const Finding*> by_id_;
};

// One cache level as the findings give it, before it is written out.
struct Level {
  std::string name;
  double capacity_bytes = 0;
  double latency_ns = 0;
  std::optional<double> bandwidth_gbps;
  std::optional<uint32_t> fetch_bytes;
  std::optional<bool> shared;
  std::string path = "load_store";
  double confidence = 0;  // the weaker of its capacity's and latency's
  std::vector<std::string> capacity_ids, latency_ids;
  bool placeholder = false;  // no level was measured: this one stands in, assumed
};

// Whether the sim's compute family has a kernel for `op` (family_compute.cpp).
bool sim_models_op(const std::string& op);
uint64_t round_to_multiple(double x, uint64_t unit);
uint32_t clamp_u32(double x, uint32_t lo, uint32_t hi);
uint32_t power_of_two_at_least(double x, uint32_t lo, uint32_t hi);

// The cache levels `prefix`'s findings ("memory" or "texture") name, nearest
// first; a level missing its capacity or latency is said in `dropped`.
std::vector<Level> read_levels(const FindingIndex& fx, const std::string& prefix, std::vector<std::string>& dropped);

// Rule `outward-growth` (docs/closed-loop.md): see model_reading.cpp.
std::vector<Level> keep_growing(std::vector<Level> levels, const std::string& prefix,
                                std::vector<Contradiction>& contradictions);

}  // namespace gpuscope::model::detail
