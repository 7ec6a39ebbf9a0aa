// The GPU a run found, written as a sim description (docs/sim.md) that the
// sim backend runs like a preset: the first half of the closed loop
// (docs/closed-loop.md). Every value is annotated: `measured` with the
// finding ids it came from, `spec` with what the driver reported, or
// `assumed` with why nothing measured it. Findings that no valid
// description can hold together (an L2 faster than the L1, a level smaller
// than the one before it) are resolved by a stated rule and listed.
#pragma once

#include "core/results.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope::model {

// Two or more findings a description cannot hold together, and what the
// model kept.
struct Contradiction {
  std::string field;                  // the description's field, as a JSON path ("memory.caches[1]")
  std::vector<std::string> findings;  // the finding ids that disagree
  std::string resolution;             // for a person: which reading was kept and why
};

struct GpuModel {
  nlohmann::json description;  // docs/sim.md's format; parse_sim_config accepts it
  std::vector<Contradiction> contradictions;
  // Where the sim's model of the hardware has no field for what was measured
  // (a texture path slower than the load path through one shared cache):
  // the replay cannot reproduce those curves, and says why.
  std::vector<std::string> gaps;
  size_t measured_values = 0;  // annotated values by basis
  size_t reported_values = 0;
  size_t assumed_values = 0;
};

// Builds the description from the run's findings and device facts. Never
// throws on contradictory or missing findings (it resolves and lists them);
// the result is checked against the sim's strict reader, and a description
// it still rejects (a bug, or a GPU past the sim's bounds) throws
// std::logic_error naming the field.
GpuModel build_model(const Results& results);

// The description without its annotations (plain numbers), for a person
// or a test comparing values.
nlohmann::json plain_description(const nlohmann::json& annotated);

// The contradictions as results.json and model.json hold them:
// [{"field", "findings", "resolution"}].
nlohmann::json contradictions_json(const GpuModel& model);

// model.json's content: the description, with the contradictions and gaps
// in its free-text `comment`.
nlohmann::json model_file_json(const GpuModel& model);

}  // namespace gpuscope::model
