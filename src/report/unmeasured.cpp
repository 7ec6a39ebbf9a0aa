#include "report/unmeasured.hpp"

#include <fmt/format.h>

namespace gpuscope {

namespace {

using nlohmann::json;

std::string text_of(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// One series' reasons, in the order the keys are documented in the header.
void from_meta(const Series& s, std::vector<Unmeasured>& out) {
  const json& meta = s.meta;
  if (!meta.is_object()) return;
  const auto add = [&](std::string what, std::string reason) {
    out.push_back({std::move(what), std::move(reason), s.id});
  };
  if (const auto it = meta.find("not_measurable"); it != meta.end() && it->is_object())
    for (const auto& [width, reason] : it->items())
      add(fmt::format("{} ({}-bit)", s.id, width), text_of(reason));
  if (const auto it = meta.find("unsupported"); it != meta.end()) {
    if (it->is_string())
      add(s.id, it->get<std::string>());
    else if (it->is_array())
      for (const auto& u : *it) {
        if (!u.is_object()) continue;
        std::string what = u.contains("series") ? text_of(u["series"]) : s.id;
        if (u.contains("values_per_op") && u["values_per_op"].is_number())
          what += fmt::format(" x{}", u["values_per_op"].get<double>());
        add(std::move(what), u.contains("reason") ? text_of(u["reason"]) : "unsupported");
      }
  }
  if (const auto it = meta.find("not_measured_time_budget");
      it != meta.end() && it->is_array() && !it->empty()) {
    std::string list;
    for (const auto& k : *it) list += (list.empty() ? "" : ", ") + text_of(k);
    add(fmt::format("{}: {} {}", s.probe.empty() ? s.id : s.probe, it->size(),
                    it->size() == 1 ? "kernel" : "kernels"),
        "the probe's time budget ran out before " + list);
  }
  if (const auto it = meta.find("sharing_skipped"); it != meta.end())
    add(s.id + " sharing experiment", text_of(*it));
  if (const auto it = meta.find("cut_short"); it != meta.end()) add(s.id + " (cut short)", text_of(*it));
  if (const auto it = meta.find("stopped"); it != meta.end()) add(s.id + " (stopped early)", text_of(*it));
  if (const auto it = meta.find("error"); it != meta.end()) add(s.id, text_of(*it));
}

}  // namespace

std::vector<Unmeasured> unmeasured(const Results& r) {
  std::vector<Unmeasured> out;
  for (const auto& s : r.skipped) out.push_back({s.probe, s.reason, ""});
  for (const auto& s : r.series) from_meta(s, out);
  return out;
}

}  // namespace gpuscope
