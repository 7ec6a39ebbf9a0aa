// The closed loop as one step after the analysis (docs/closed-loop.md): the
// model of the GPU found, written beside results.json; the replay of the
// run's probes on it; the findings held to how well it reproduces them.
#pragma once

#include "core/results.hpp"

#include <string>

namespace gpuscope::model {

// What the loop does after building the model.
enum class LoopReplay {
  replay,         // replay the run's probes on the model, hold the findings to it
  hold_recorded,  // hold the findings to the replay r.model recorded (a run's,
                  // read back by analyze: the analysis it follows is deterministic)
  none,           // the model alone: the readers' confidences stand
};

// Whether a replay that misses is followed by the fit (fit.hpp).
enum class LoopFit { fit, no_fit };

// Builds `r`'s model from its findings, replays it (with the fit where
// `fit` says) or holds the findings to the recorded replay as `mode` says
// (replay.hpp's rule), and writes the model (fitted where the fit was kept)
// to `model_path` (nowhere when empty). Records what it did in r.model
// (docs/results-format.md). A model that cannot be built is recorded there
// with the reason, and the run's results stand as they are.
void close_the_loop(Results& r, const std::string& model_path, LoopReplay mode, LoopFit fit = LoopFit::fit);

}  // namespace gpuscope::model
