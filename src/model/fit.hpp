// The fit, the third step of the closed loop (docs/closed-loop.md): where
// the replay misses a series whose shape the model's memory parameters set
// (the latency chase, the TLB strides), those parameters are searched,
// starting from the readers' values, for a description that reproduces the
// series better. The readers propose; a fitted value replaces theirs only
// where it lowers rule `fit-criterion` (fit_criterion below), which charges
// every value moved from the readers' as one more parameter.
#pragma once

#include "core/results.hpp"
#include "model/replay.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuscope::model {

// One value the fit moved.
struct FitChange {
  std::string field;                  // the description's field, as a path ("memory.caches[1].capacity_bytes")
  std::string at;                     // the same as a JSON pointer ("/memory/caches/1/capacity_bytes")
  nlohmann::json reader;              // what the readers (or an assumption) had put there
  nlohmann::json fitted;              // what the fit put there
  std::string basis;                  // the reader's value's basis: measured, spec or assumed
  std::vector<std::string> findings;  // the finding ids the reader's value came from
};

// The fit of one probe's series.
struct ProbeFit {
  std::string probe;
  std::vector<std::string> missed;  // its series the model missed (root mean square of the log ratios past their tolerance)
  size_t points = 0;                // measured points the criterion is taken over
  double criterion_before = 0;      // fit_criterion with the readers' values
  double criterion_after = 0;       // with the fitted ones (equal where nothing moved)
  size_t evaluations = 0;           // candidate descriptions replayed
  std::string stopped;              // "" where the search ended by itself, else what stopped it
  double wall_s = 0;
  std::vector<FitChange> changes;   // empty: the readers' values stand
};

struct Fit {
  nlohmann::json description;  // the model after the fit (annotated; the input where nothing moved)
  std::vector<ProbeFit> probes;
  double wall_s = 0;
  bool changed() const;
};

// Rule `fit-criterion`: how well a twin explains one measured series,
// lower is better. A Bayesian information criterion over the log ratios
// r = ln(modelled / measured) of the points both have:
//   n ln(max(mean r^2, floor^2))
// with floor the series' own noise (never below kCriterionFloor: a
// noiseless model cannot tell apart what the data cannot). The fit adds
// ln(N) for every value it moved (N: the points of the probe's series).
inline constexpr double kCriterionFloor = 0.005;
double fit_criterion(const Series& measured, const std::vector<double>& modelled_y, double noise);

// Fits the parameters whose points (the x they shape: a level's knee or
// plateau) the model of `replay` misses by more than their series'
// tolerance, among those the fit knows how to move (probes `tlb`, then `latency`, each
// from the model the one before left); `threads` host threads for the
// replays between them.
// Never throws for a candidate the sim rejects (it is not a model) or a
// probe that fails on one (it scores worst).
Fit fit_model(const Results& measured, const nlohmann::json& description, const Replay& replay, unsigned threads = 1);

// `description` with the fit's values in place, each annotated `fitted`
// with the readers' value and the series that moved it.
nlohmann::json with_fitted_values(const nlohmann::json& description, const Fit& fit);

// A fit as results.json's "model.fit" recorded it, where its verdict was
// "kept" (else empty): what `analyze` applies again to the readers'
// recomputed values.
Fit recorded_fit(const nlohmann::json& fit_section);

// The findings whose values the fit moved take the fitted value (in the
// finding's unit) and say what the reader had read. Call after the replay
// of the fitted model has confirmed it (closed_loop.cpp).
void apply_fit_to_findings(std::vector<Finding>& findings, const Fit& fit);

// Whether the replay of the fitted model (`refit`) confirms the fit made
// from `before` (the replay of the readers' model): for every probe whose
// values moved, its series' fit-criterion, charged for the values moved,
// is lower than the readers' model's; and no series the readers' model
// reproduced is lost. "" when confirmed, else why not.
std::string fit_unconfirmed(const Fit& fit, const Replay& before, const Replay& refit,
                            const std::vector<Series>& measured);

// results.json's "model.fit" section (docs/results-format.md); `verdict`:
// "kept", or why the fitted values were not.
nlohmann::json fit_json(const Fit& fit, const std::string& verdict);

}  // namespace gpuscope::model
