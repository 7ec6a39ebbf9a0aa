// model.json as written: the annotated description (model_builder.cpp
// builds it) with the model's contradictions, gaps and the count of values
// by basis under "comment", and the plain description the sim reads.
#include "model/model_builder.hpp"

namespace gpuscope::model {
namespace {

using nlohmann::json;

// The description without its annotations: each {value, basis, ...} field
// replaced by its value, "comment" and "sources" dropped.
json strip(const json& j) {
  if (j.is_object()) {
    if (j.contains("value") && j.contains("basis")) return strip(j.at("value"));
    json out = json::object();
    for (const auto& [k, v] : j.items())
      if (k != "comment" && k != "sources") out[k] = strip(v);
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(strip(v));
    return out;
  }
  return j;
}

}  // namespace

nlohmann::json plain_description(const nlohmann::json& annotated) { return strip(annotated); }

nlohmann::json contradictions_json(const GpuModel& model) {
  json out = json::array();
  for (const auto& c : model.contradictions)
    out.push_back({{"field", c.field}, {"findings", c.findings}, {"resolution", c.resolution}});
  return out;
}

nlohmann::json model_file_json(const GpuModel& model) {
  json out = model.description;
  out["comment"]["contradictions"] = contradictions_json(model);
  out["comment"]["gaps"] = model.gaps;
  out["comment"]["values"] = {{"measured", model.measured_values},
                              {"reported", model.reported_values},
                              {"assumed", model.assumed_values}};
  return out;
}

}  // namespace gpuscope::model
