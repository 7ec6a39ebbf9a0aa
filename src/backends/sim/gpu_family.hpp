// GPU families as templates: a sim description may name a family
// description ("family": "bifrost") and give only what differs from it. The
// families are embedded like the presets (src/backends/sim/presets/
// families/*.json, one file per family); a family may itself name a family.
//
// Resolution is a merge of JSON before the strict reader sees it, so the
// reader, results.json (device.vendor_info.sim_description) and every tool
// that reads a description see the whole resolved description:
//   - an object merges key by key into the family's object;
//   - a value written with an annotation ({"value": ..., "basis": ...}),
//     or over one, replaces it whole: a value never keeps the basis or
//     source of the value it replaced;
//   - null removes the family's key;
//   - memory.caches and rates.ops are the description's own list: each
//     element merges into the family's element of the same identity (a
//     cache level by "name", an op by "type" and "op"), an element the
//     family lacks is taken as written, and a family element left out of
//     the list is dropped;
//   - any other array, and any plain value, replaces the family's.
#pragma once

#include "backends/sim/sim_config.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope::sim {

// Embedded family descriptions: name (the file's stem) -> JSON text.
const std::vector<SimPreset>& sim_gpu_families();

// Family chains longer than this are refused (a chain is a few levels:
// a generation over a vendor's base).
inline constexpr size_t kSimMaxFamilyDepth = 8;

struct ResolvedDescription {
  nlohmann::json description;         // `family` removed, every family merged in
  std::vector<std::string> families;  // the chain, nearest first; empty when none is named
};

// Resolves `j`'s family chain. Throws UsageError (exit status 2) for a
// family that is not a string or not embedded, a chain that names a family
// twice or runs past kSimMaxFamilyDepth, a family file that is not valid
// JSON, and two elements of one merged list with the same identity.
ResolvedDescription resolve_gpu_family(const nlohmann::json& j);

}  // namespace gpuscope::sim
