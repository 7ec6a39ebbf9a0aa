#include "model/closed_loop.hpp"

#include "core/atomic_file.hpp"
#include "model/fit.hpp"
#include "model/model_builder.hpp"
#include "model/replay.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <thread>

namespace gpuscope::model {
namespace {

// The verdicts of a replay recorded in results.json and its modelled
// points: what holding the findings to it again needs.
Replay recorded_replay(const nlohmann::json& j) {
  Replay out;
  if (!j.is_object() || !j.contains("series") || !j["series"].is_array()) return out;
  for (const auto& s : j["series"]) {
    if (!s.is_object()) continue;
    SeriesReplay r;
    const auto num = [&](const char* k) {
      return s.contains(k) && s[k].is_number() ? s[k].get<double>() : std::nan("");
    };
    if (!s.contains("id") || !s["id"].is_string() || !s.contains("reproduced") || !s["reproduced"].is_boolean())
      continue;
    r.id = s["id"].get<std::string>();
    r.reproduced = s["reproduced"].get<bool>();
    r.median_error = num("median_error");
    r.worst_error = num("worst_error");
    r.worst_x = num("worst_x");
    r.tolerance = num("tolerance");
    if (s.contains("modelled_y") && s["modelled_y"].is_array())
      for (const auto& y : s["modelled_y"]) r.modelled_y.push_back(y.is_number() ? y.get<double>() : std::nan(""));
    // A verdict whose numbers are not usable is not held to.
    if (!(r.tolerance > 0) || !std::isfinite(r.median_error)) continue;
    out.series.push_back(std::move(r));
  }
  return out;
}

// Threads the replay may take: a real GPU's run leaves the host's cores idle
// (its probes timed the device); a CPU device's and the sim's runs replay
// in line, as their results are saved in line (app/results_saver.hpp: a
// sim run under qemu-user, the arm64 check, never returned from starting
// a thread).
unsigned replay_threads(const DeviceInfo& d) {
  const bool real_gpu = d.type == "gpu" && d.id.rfind("sim:", 0) != 0;
  return real_gpu ? std::max(1u, std::thread::hardware_concurrency()) : 1;
}

// What the first screen adds to the replay's line where a fit was kept.
std::string fitted_line(const nlohmann::json& model) {
  const Fit f = recorded_fit(model.contains("fit") ? model["fit"] : nlohmann::json());
  std::vector<std::string> fields;
  for (const auto& p : f.probes)
    for (const auto& c : p.changes) fields.push_back(c.field);
  if (fields.empty()) return "";
  return fmt::format(" The fit moved {} value{} the readers had put elsewhere: {}.", fields.size(),
                     fields.size() == 1 ? "" : "s", fmt::join(fields, ", "));
}

}  // namespace

void close_the_loop(Results& r, const std::string& model_path, LoopReplay mode, LoopFit fit) {
  const nlohmann::json previous_replay = r.model.is_object() && r.model.contains("replay") ? r.model["replay"]
                                                                                         : nlohmann::json();
  const nlohmann::json previous_fit = r.model.is_object() && r.model.contains("fit") ? r.model["fit"]
                                                                                     : nlohmann::json();
  r.model = nlohmann::json::object();
  GpuModel m;
  try {
    m = build_model(r);
  } catch (const std::exception& e) {
    r.model["error"] = std::string("no model: ") + e.what();
    return;
  }
  std::optional<Replay> replay;
  if (mode == LoopReplay::hold_recorded && previous_replay.is_object()) {
    // The readers' values recomputed, the recorded fit's applied again:
    // the model and findings the recorded replay was made of.
    const Fit kept = recorded_fit(previous_fit);
    if (kept.changed()) {
      m.description = with_fitted_values(m.description, kept);
      apply_fit_to_findings(r.findings, kept);
    }
  }
  if (mode == LoopReplay::replay) {
    replay = replay_on_model(r, m.description, replay_threads(r.device));
    if (fit == LoopFit::fit) {
      // The fit searches from the readers' model; its values are kept only
      // where the whole replay of the fitted model confirms them.
      Fit f = fit_model(r, m.description, *replay, replay_threads(r.device));
      std::string verdict = "nothing to fit: the model draws every point the fit can move within its series' tolerance";
      if (f.changed()) {
        Replay refit = replay_on_model(r, f.description, replay_threads(r.device));
        verdict = fit_unconfirmed(f, *replay, refit, r.series);
        if (verdict.empty()) {
          verdict = "kept";
          refit.wall_s += replay->wall_s;
          m.description = f.description;
          replay = std::move(refit);
          apply_fit_to_findings(r.findings, f);
        } else {
          verdict = "not kept: " + verdict;
        }
      } else if (!f.probes.empty()) {
        verdict = "no value moved: the readers' values explain the missed series best";
      }
      r.model["fit"] = fit_json(f, verdict);
    }
  }
  if (!model_path.empty()) {
    write_file_atomic(model_file_json(m).dump(2) + "\n", model_path);
    r.model["file"] = "model.json";
  }
  r.model["values"] = {{"measured", m.measured_values}, {"reported", m.reported_values}, {"assumed", m.assumed_values}};
  r.model["contradictions"] = contradictions_json(m);
  r.model["gaps"] = m.gaps;
  if (replay) {
    hold_findings_to_replay(r.findings, *replay, r.series);
    r.model["replay"] = replay_json(*replay);
    r.model["summary"] = replay_summary_line(*replay) + fitted_line(r.model);
  } else if (mode == LoopReplay::hold_recorded && previous_replay.is_object()) {
    hold_findings_to_replay(r.findings, recorded_replay(previous_replay), r.series);
    r.model["replay"] = previous_replay;
    r.model["summary"] = replay_summary_line(recorded_replay(previous_replay)) + fitted_line(r.model);
    if (previous_fit.is_object()) r.model["fit"] = previous_fit;
  }
}

}  // namespace gpuscope::model
