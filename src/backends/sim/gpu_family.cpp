// The merge of a description over its GPU family (gpu_family.hpp states
// the rules).
#include "backends/sim/gpu_family.hpp"

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

namespace gpuscope::sim {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw UsageError(fmt::format("sim description: {}: {}", path, what));
}

bool annotated(const nlohmann::json& v) { return v.is_object() && v.contains("value"); }

// The lists merged element by element, and the keys that identify an
// element of each.
const std::vector<std::string>* identity_keys(const std::string& path) {
  static const std::vector<std::string> cache_keys = {"name"};
  static const std::vector<std::string> op_keys = {"type", "op"};
  if (path == "memory.caches") return &cache_keys;
  if (path == "rates.ops") return &op_keys;
  return nullptr;
}

// An element's identity ("L2", "float/fma"), or none when it is not an
// object with every identity key a string (the reader then says what is
// wrong with it).
std::optional<std::string> identity(const nlohmann::json& e, const std::vector<std::string>& keys) {
  if (!e.is_object()) return std::nullopt;
  std::string id;
  for (const auto& k : keys) {
    const auto it = e.find(k);
    if (it == e.end() || !it->is_string()) return std::nullopt;
    id += (id.empty() ? "" : "/") + it->get<std::string>();
  }
  return id;
}

nlohmann::json merge(const nlohmann::json& base, const nlohmann::json& over, const std::string& path);

nlohmann::json merge_list(const nlohmann::json& base, const nlohmann::json& over, const std::string& path,
                          const std::vector<std::string>& keys) {
  auto check_unique = [&](const nlohmann::json& list, const char* whose) {
    std::vector<std::string> seen;
    for (const auto& e : list)
      if (const auto id = identity(e, keys)) {
        if (std::find(seen.begin(), seen.end(), *id) != seen.end())
          fail(path, fmt::format("{} lists '{}' twice; a list merged over a family needs one element per {}",
                                 whose, printable(*id), fmt::join(keys, " and ")));
        seen.push_back(*id);
      }
  };
  check_unique(base, "the family");
  check_unique(over, "the description");
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < over.size(); ++i) {
    const auto id = identity(over[i], keys);
    const nlohmann::json* match = nullptr;
    if (id)
      for (const auto& b : base)
        if (identity(b, keys) == id) match = &b;
    out.push_back(match ? merge(*match, over[i], fmt::format("{}[{}]", path, i)) : over[i]);
  }
  return out;
}

nlohmann::json merge(const nlohmann::json& base, const nlohmann::json& over, const std::string& path) {
  if (base.is_array() && over.is_array())
    if (const auto* keys = identity_keys(path)) return merge_list(base, over, path, *keys);
  if (!base.is_object() || !over.is_object() || annotated(base) || annotated(over)) return over;
  nlohmann::json out = base;
  for (const auto& [k, v] : over.items()) {
    if (v.is_null()) {
      out.erase(k);
      continue;
    }
    const auto it = base.find(k);
    out[k] = it == base.end() ? v : merge(*it, v, json_key_path(path, k));
  }
  return out;
}

const SimPreset* find_family(const std::string& name) {
  for (const auto& f : sim_gpu_families())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

ResolvedDescription resolve_gpu_family(const nlohmann::json& j) {
  ResolvedDescription r;
  if (!j.is_object() || !j.contains("family")) {
    r.description = j;
    return r;
  }
  // The chain, nearest first, each family's text parsed once.
  std::vector<nlohmann::json> chain{j};
  const nlohmann::json* cur = &j;
  while (cur->is_object() && cur->contains("family")) {
    const nlohmann::json& f = cur->at("family");
    const std::string where =
        r.families.empty() ? "family" : fmt::format("family (in family {})", r.families.back());
    if (!f.is_string()) fail(where, fmt::format("expected the name of a family, got {}", f.type_name()));
    const std::string name = f.get<std::string>();
    const SimPreset* fam = find_family(name);
    if (!fam) {
      std::vector<std::string> names;
      for (const auto& g : sim_gpu_families()) names.push_back(g.name);
      fail(where, fmt::format("'{}' is not a family; families: {}", printable(name), fmt::join(names, ", ")));
    }
    if (std::find(r.families.begin(), r.families.end(), name) != r.families.end())
      fail(where, fmt::format("the chain {} names '{}' again", fmt::join(r.families, " -> "), name));
    if (r.families.size() == kSimMaxFamilyDepth)
      fail(where, fmt::format("a chain of more than {} families", kSimMaxFamilyDepth));
    r.families.push_back(name);
    try {
      chain.push_back(parse_json_input(fam->json_text, kSimDescriptionLimits.max_depth));
    } catch (const UsageError& e) {
      fail(where, fmt::format("family '{}' is not valid JSON: {}", name, e.what()));
    }
    cur = &chain.back();
  }
  // Merge outwards in: the farthest family first, the description last.
  nlohmann::json out = chain.back();
  for (size_t i = chain.size() - 1; i-- > 0;) out = merge(out, chain[i], "");
  out.erase("family");
  r.description = std::move(out);
  return r;
}

}  // namespace gpuscope::sim
