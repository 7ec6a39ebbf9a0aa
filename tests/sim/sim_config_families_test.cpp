// The presets as their resolved descriptions: every field the sim runs on,
// and every value's annotation (basis, source, note), held equal to
// tests/data/sim_presets/*.json, which the reader wrote from the flat presets
// before they were re-expressed over family descriptions. A field that moves
// between a preset and its family must come out the same.
#include "backends/sim/gpu_family.hpp"
#include "backends/sim/sim_config.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "support/sim_config_fields.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
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

namespace {

nlohmann::json preset_json(const std::string& name) {
  for (const auto& p : sim_presets())
    if (p.name == name) return nlohmann::json::parse(p.json_text);
  throw std::runtime_error("no preset " + name);
}

std::string rejection(const nlohmann::json& j) {
  try {
    parse_sim_config(j, "test");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SimGpuFamily, EveryPresetNamesAFamilyAndEveryFamilyIsUsed) {
  std::vector<std::string> used;
  for (const auto& p : sim_presets()) {
    const SimConfig c = load_sim_preset(p.name);
    EXPECT_FALSE(c.gpu_families.empty()) << p.name << " names no GPU family";
    EXPECT_FALSE(c.source.contains("family")) << "the resolved description keeps no family key";
    used.insert(used.end(), c.gpu_families.begin(), c.gpu_families.end());
  }
  for (const auto& f : sim_gpu_families())
    EXPECT_NE(std::find(used.begin(), used.end(), f.name), used.end())
        << "no preset builds on family " << f.name;
}

TEST(SimGpuFamily, ChainIsNearestFirstAndShownInVendorInfo) {
  const SimConfig c = load_sim_preset("adreno-530");
  EXPECT_EQ(c.gpu_families, (std::vector<std::string>{"adreno-5xx", "adreno"}));
  const DeviceInfo d = sim_device_info(c, "sim:adreno-530");
  EXPECT_EQ(d.vendor_info.at("sim_gpu_families"), nlohmann::json({"adreno-5xx", "adreno"}));
  EXPECT_FALSE(d.vendor_info.at("sim_description").contains("family"));
}

TEST(SimGpuFamily, AnOverrideReplacesTheWholeAnnotatedValue) {
  nlohmann::json j = preset_json("mali-g52");
  j["core"]["clock_mhz"] = 950;  // plain: the family's basis and source must not stay
  j["core"]["wave_width"] = {{"value", 8}, {"basis", "measured"}, {"source", "a test"}};
  const SimConfig c = parse_sim_config(j, "test");
  EXPECT_EQ(c.core.clock_mhz, 950);
  EXPECT_EQ(c.source["core"]["clock_mhz"], 950);
  EXPECT_EQ(c.source["core"]["wave_width"]["source"], "a test");
  EXPECT_FALSE(c.source["core"]["wave_width"].contains("note"));
  // What the description leaves alone comes from the family, annotation and all.
  EXPECT_EQ(c.source["core"]["lanes_per_unit"], load_sim_preset("mali-g52").source["core"]["lanes_per_unit"]);
}

TEST(SimGpuFamily, NullRemovesTheFamilysKey) {
  nlohmann::json j = preset_json("mali-g52");
  j["governor"] = nullptr;
  j["raster"]["fb_compression"] = nullptr;
  const SimConfig c = parse_sim_config(j, "test");
  EXPECT_FALSE(c.governor.present);
  EXPECT_EQ(c.raster.fb_compression_block_px, 0u);
  EXPECT_TRUE(load_sim_preset("mali-g52").governor.present);
}

TEST(SimGpuFamily, CachesAreTheDescriptionsListMergedByName) {
  nlohmann::json j = preset_json("mali-g52");
  auto& caches = j["memory"]["caches"];
  // Leave the texture cache out, and give the L2 a capacity of its own.
  nlohmann::json kept = nlohmann::json::array();
  for (auto e : caches) {
    if (e["name"] == "texture") continue;
    if (e["name"] == "L2") e["capacity_bytes"] = 262144;
    kept.push_back(e);
  }
  caches = kept;
  const SimConfig c = parse_sim_config(j, "test");
  ASSERT_EQ(c.caches.size(), 2u);
  EXPECT_EQ(c.caches[0].name, "L1");
  EXPECT_EQ(c.caches[1].name, "L2");
  EXPECT_EQ(c.caches[1].capacity_bytes, 262144u);
  const SimConfig flat = load_sim_preset("mali-g52");
  EXPECT_EQ(c.caches[1].associativity, flat.caches[2].associativity) << "the family's L2 fields stay";
  EXPECT_EQ(c.caches[1].line_bytes, flat.caches[2].line_bytes);

  // A level the family lacks is taken as written.
  nlohmann::json k = preset_json("mali-g52");
  k["memory"]["caches"].push_back({{"name", "SLC"},
                                   {"capacity_bytes", 4 << 20},
                                   {"line_bytes", 64},
                                   {"associativity", 16},
                                   {"replacement", "lru"},
                                   {"hit_latency_ns", 250},
                                   {"bytes_per_clock", 32},
                                   {"path", "both"}});
  k["memory"]["dram"]["latency_ns"] = 400;
  EXPECT_EQ(parse_sim_config(k, "test").caches.back().name, "SLC");
}

TEST(SimGpuFamily, RefusesWhatItCannotResolve) {
  nlohmann::json j = preset_json("mali-g52");
  j["family"] = "valhalla";
  EXPECT_NE(rejection(j).find("family: 'valhalla' is not a family; families:"), std::string::npos)
      << rejection(j);
  j["family"] = 7;
  EXPECT_NE(rejection(j).find("family: expected the name of a family"), std::string::npos) << rejection(j);

  nlohmann::json twice = preset_json("mali-g52");
  twice["memory"]["caches"].push_back({{"name", "L2"}});
  EXPECT_NE(rejection(twice).find("memory.caches: the description lists 'L2' twice"), std::string::npos)
      << rejection(twice);

  // A field wrong in the resolved whole is named, with the chain it came through.
  nlohmann::json bad = preset_json("adreno-530");
  bad["core"]["wave_width"] = 0;
  EXPECT_NE(rejection(bad).find("core.wave_width"), std::string::npos) << rejection(bad);
  EXPECT_NE(rejection(bad).find("over GPU family adreno-5xx -> adreno"), std::string::npos) << rejection(bad);
}
