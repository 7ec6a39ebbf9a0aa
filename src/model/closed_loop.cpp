#include "model/closed_loop.hpp"

#include "core/atomic_file.hpp"
#include "model/model_builder.hpp"
#include "model/replay.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
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

}  // namespace

void close_the_loop(Results& r, const std::string& model_path, LoopReplay mode) {
  const nlohmann::json previous_replay = r.model.is_object() && r.model.contains("replay") ? r.model["replay"]
                                                                                         : nlohmann::json();
  r.model = nlohmann::json::object();
  GpuModel m;
  try {
    m = build_model(r);
  } catch (const std::exception& e) {
    r.model["error"] = std::string("no model: ") + e.what();
    return;
  }
  if (!model_path.empty()) {
    write_file_atomic(model_file_json(m).dump(2) + "\n", model_path);
    r.model["file"] = "model.json";
  }
  r.model["values"] = {{"measured", m.measured_values}, {"reported", m.reported_values}, {"assumed", m.assumed_values}};
  r.model["contradictions"] = contradictions_json(m);
  r.model["gaps"] = m.gaps;
  if (mode == LoopReplay::replay) {
    const Replay rp = replay_on_model(r, m.description, replay_threads(r.device));
    hold_findings_to_replay(r.findings, rp, r.series);
    r.model["replay"] = replay_json(rp);
    r.model["summary"] = replay_summary_line(rp);
  } else if (mode == LoopReplay::hold_recorded && previous_replay.is_object()) {
    hold_findings_to_replay(r.findings, recorded_replay(previous_replay), r.series);
    r.model["replay"] = previous_replay;
    r.model["summary"] = replay_summary_line(recorded_replay(previous_replay));
  }
}

}  // namespace gpuscope::model
