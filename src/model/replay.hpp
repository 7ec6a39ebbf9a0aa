// The second half of the closed loop (docs/closed-loop.md): the probes that
// ran are run again on the model of the GPU they found (model_builder.hpp),
// through the sim, without noise and, where a probe takes them, at exactly
// the measured series' points; each measured series gets its modelled twin
// and how far the twin is from it. A finding read from a series the model
// does not reproduce loses confidence by one rule (hold_findings_to_replay).
#pragma once

#include "backends/sim/sim_config.hpp"
#include "core/results.hpp"
#include "probes/probe.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpuscope::model {

// How well the model reproduces one measured series. Errors are relative,
// |modelled - measured| / measured, over the points both have.
struct SeriesReplay {
  std::string id;     // the measured series' id
  std::string probe;
  size_t points = 0;  // measured points the twin was compared at
  size_t interpolated = 0;  // of them, points the twin had no sample at (read between its neighbours)
  double median_error = 0;
  double worst_error = 0;
  double worst_x = 0;       // where the worst error is, in the series' x unit
  double noise = 0;         // the measured series' own relative spread (median MAD / median)
  double tolerance = 0;     // the median error up to which the series counts as reproduced
  bool reproduced = false;
  std::vector<double> modelled_y;  // the twin at each measured point (same order), NaN where none
};

struct Replay {
  std::vector<SeriesReplay> series;
  std::vector<Skipped> skipped;  // probes, or series, that could not be replayed, and why
  double wall_s = 0;             // host time the replay took
  std::map<std::string, double> probe_wall_s;  // of it, each probe's
};

// A series is reproduced when its median error is at most this, or at most
// kNoiseMultiple times its own measured noise where that is larger: the
// model is held to what the data can tell apart. 5% is the recovery
// benchmark's tolerance for latencies, the tightest it holds any value to.
inline constexpr double kReproducedMedianError = 0.05;
inline constexpr double kNoiseMultiple = 3.0;

// Runs the probes that produced `measured`'s series on the model
// `description` (an annotated sim description), each on a sim device of
// its own, on up to `threads` host threads at once. Never throws for a
// probe that fails on the model: it is listed in `skipped` with the reason.
Replay replay_on_model(const Results& measured, const nlohmann::json& description, unsigned threads = 1);

// Pieces of the replay the fit (fit.hpp) runs again on its candidates.
// The description as the sim's config with its noise removed (the twin is
// the model's own curve, not a draw around it); throws std::runtime_error
// naming the field where the description is not valid.
sim::SimConfig noiseless_config(const nlohmann::json& description);
// One noiseless sample a point, launches sized as the measured run's.
ProbeOptions replay_options(const Results& measured);
// The probe a replay runs for `name`, or null where the model does not
// describe what it measures (sustain, the graphics probes) or no such probe.
const ProbeDef* replayable_probe(const std::string& name);
// `def` run on a sim device of its own built from `cfg`; throws what it throws.
std::vector<Series> run_probe_on_model(const ProbeDef& def, const sim::SimConfig& cfg, const ProbeOptions& options);
// The twin's y at x: its own point where it has one, else read between its
// neighbours (linearly in log x where both x are positive, counted as
// `interpolated`); NaN outside its range.
double modelled_at(const Series& twin, double x, bool& interpolated);

// Compares a measured series with its modelled twin (tests call it alone).
SeriesReplay compare_series(const Series& measured, const Series& modelled);

// Rule `replay-confidence`, the one place the replay moves confidence: a
// finding is judged on the points of each evidence series it was read from
// (a value in the series' y unit: the points within 10% of it, its
// plateau; in its x unit: the points within a factor 1.5 of it outside its
// interval, the plateaus its step joins; otherwise every point). Where the median error over those points passes
// the series' tolerance, the finding's confidence is divided by how many
// times over (the worst evidence series decides: missed by twice the
// tolerance halves it), and its note names the series, the points, the
// median and worst error and where. Findings whose points the model
// reproduces, and findings with no replayed evidence, keep theirs.
// `measured`: the run's series, whose points the replay's modelled_y
// follow in order.
void hold_findings_to_replay(std::vector<Finding>& findings, const Replay& replay,
                             const std::vector<Series>& measured);

// results.json's "replay" section (docs/results-format.md).
nlohmann::json replay_json(const Replay& replay);

// One line for the first screen: how much of the run the model reproduces.
std::string replay_summary_line(const Replay& replay);

}  // namespace gpuscope::model
