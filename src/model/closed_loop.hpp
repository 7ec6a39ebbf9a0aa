// The closed loop as one step after the analysis (docs/closed-loop.md): the
// model of the GPU found, written beside results.json; the replay of the
// run's probes on it; the findings held to how well it reproduces them.
#pragma once

#include "core/results.hpp"

#include <string>

namespace gpuscope::model {

// Builds `r`'s model from its findings, writes it to `model_path` (nowhere when empty), and,
// where `replay` is set, replays the run's probes on it and holds the
// findings to the replay (replay.hpp's rule). Without `replay`, a replay
// already recorded in r.model (a run's, read back by analyze) is held to
// again, since the analysis it follows is deterministic. Records what it
// did in r.model (docs/results-format.md). A model that cannot be built is
// recorded there with the reason, and the run's results stand as they are.
void close_the_loop(Results& r, const std::string& model_path, bool replay);

}  // namespace gpuscope::model
