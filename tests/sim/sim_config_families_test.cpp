// The presets as their resolved descriptions: every field the sim runs on,
// and every value's annotation (basis, source, note), held equal to
// tests/data/sim_presets/*.json, which the reader wrote from the flat presets
// before they were re-expressed over family descriptions. A field that moves
// between a preset and its family must come out the same.
#include "backends/sim/sim_config.hpp"
#include "support/sim_config_fields.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace gpuscope;
using namespace gpuscope::sim;
namespace fs = std::filesystem;

namespace {

// The presets that existed as flat files; their resolved form is pinned.
const std::vector<std::string> kPinnedPresets = {"adreno-320", "adreno-420", "adreno-530", "adreno-615",
                                                 "mali-g52"};

fs::path golden_path(const std::string& preset) {
  return fs::path(GPUSCOPE_TEST_DATA) / "sim_presets" / (preset + ".json");
}

nlohmann::json resolved(const std::string& preset) {
  const SimConfig c = load_sim_preset(preset);
  return {{"fields", test::sim_config_fields(c)}, {"description", c.source}};
}

// Key-by-key differences of two flat objects, one line each.
std::vector<std::string> differences(const nlohmann::json& want, const nlohmann::json& got) {
  std::vector<std::string> out;
  for (const auto& [k, v] : want.items()) {
    if (!got.contains(k))
      out.push_back(k + ": missing (want " + v.dump() + ")");
    else if (got.at(k) != v)
      out.push_back(k + ": " + got.at(k).dump() + " (want " + v.dump() + ")");
  }
  for (const auto& [k, v] : got.items())
    if (!want.contains(k)) out.push_back(k + ": " + v.dump() + " is not in the golden description");
  return out;
}

}  // namespace

// GPUSCOPE_UPDATE_GOLDEN=1 rewrites the files from the current reader and
// presets; review the diff (a changed field is a changed preset).
TEST(SimPresetGolden, ResolvedPresetsEqualTheirGoldenFieldByField) {
  const bool update = std::getenv("GPUSCOPE_UPDATE_GOLDEN") != nullptr;
  for (const auto& name : kPinnedPresets) {
    SCOPED_TRACE(name);
    const nlohmann::json got = resolved(name);
    const fs::path path = golden_path(name);
    if (update) {
      fs::create_directories(path.parent_path());
      std::ofstream(path) << got.dump(1) << "\n";
      continue;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << path << " is missing; GPUSCOPE_UPDATE_GOLDEN=1 writes it";
    const nlohmann::json want = nlohmann::json::parse(in);
    for (const auto& d : differences(want.at("fields"), got.at("fields"))) ADD_FAILURE() << "field " << d;
    for (const auto& d : differences(want.at("description").flatten(), got.at("description").flatten()))
      ADD_FAILURE() << "description " << d;
  }
}
