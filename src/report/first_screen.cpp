#include "report/first_screen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

#include "report/block_diagram.hpp"
#include "report/block_diagram_svg.hpp"
#include "report/html_report.hpp"
#include "report/reference.hpp"
#include "report/unmeasured.hpp"

namespace gpuscope {

namespace {

using nlohmann::json;
using html::Markup;

// The deepest cache level a profile is read for.
constexpr int kMaxLevels = 8;

struct Headline {
  const char* name;
  const char* title;
  const char* series;
  const char* level_suffix;  // memory.L<n>.<suffix> and memory.dram.<suffix>
};

constexpr Headline kHeadlines[] = {
    {"latency", "Latency against footprint", "latency.global", "latency_ns"},
    {"bandwidth", "Read bandwidth against footprint", "bandwidth.read", "bandwidth_gbps"},
};

std::optional<double> scalar(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (!f) return std::nullopt;
  const auto* d = std::get_if<double>(&f->value);
  if (!d || !std::isfinite(*d)) return std::nullopt;
  return *d;
}

// Lower case letters and digits only: "NVIDIA H200" and "H200" compare as
// "nvidiah200" containing "h200".
std::string squeezed(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  return out;
}

bool names_profile(const std::string& device_name, const ReferenceProfile& p) {
  const std::string name = squeezed(device_name);
  std::vector<std::string> names = {p.name};
  names.insert(names.end(), p.aliases.begin(), p.aliases.end());
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    const std::string s = squeezed(n);
    return s.size() >= 4 && name.find(s) != std::string::npos;
  });
}

// A profile's published figures on one headline curve, drawn over the
// footprints [x_min, x_max]: each level's value from the previous level's
// capacity to its own, DRAM's from the last capacity on.
json reference_curve(const Results& ref, const Headline& h, double x_min, double x_max) {
  json steps = json::array(), marks = json::array(), points = json::array();
  std::optional<double> previous;
  for (int n = 1; n <= kMaxLevels; ++n) {
    const auto capacity = scalar(ref, fmt::format("memory.L{}.capacity_bytes", n));
    const auto value = scalar(ref, fmt::format("memory.L{}.{}", n, h.level_suffix));
    if (!capacity && !value) continue;
    const std::string label = fmt::format("L{}", n);
    if (capacity && value)
      steps.push_back({previous.value_or(std::min(x_min, *capacity / 4)), *capacity, *value, label});
    else if (capacity)
      marks.push_back({*capacity, label});
    if (capacity) previous = capacity;
  }
  if (const auto dram = scalar(ref, fmt::format("memory.dram.{}", h.level_suffix))) {
    const double from = previous.value_or(x_min);
    steps.push_back({from, std::max(x_max, from * 8), *dram, "DRAM"});
  }
  if (const Series* s = ref.find_series(h.series)) {
    const json& sources = s->meta.contains("sources") ? s->meta["sources"] : json::array();
    for (size_t k = 0; k < s->points.size(); ++k)
      points.push_back({s->points[k].x, s->points[k].y,
                        k < sources.size() && sources[k].is_string() ? sources[k] : json("")});
  }
  return {{"steps", std::move(steps)}, {"marks", std::move(marks)}, {"points", std::move(points)}};
}

}  // namespace

json headline_data(const std::vector<ReportRun>& runs) {
  json charts = json::array();
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0;
  for (const Headline& h : kHeadlines) {
    json traces = json::array();
    const Series* first = nullptr;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].reference) continue;
      const Series* s = runs[i].results->find_series(h.series);
      if (!s || s->points.empty()) continue;
      if (!first) first = s;
      json points = json::array();
      for (const size_t k : drawn_points(*s)) {
        const Point& p = s->points[k];
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        points.push_back({p.x, p.y});
        if (p.x > 0) {
          x_min = std::min(x_min, p.x);
          x_max = std::max(x_max, p.x);
        }
      }
      traces.push_back({{"run", i}, {"label", runs[i].label}, {"points", std::move(points)}});
    }
    if (!first) continue;
    charts.push_back({{"name", h.name},
                      {"title", h.title},
                      {"series", h.series},
                      {"chart", chart_anchor(h.series)},
                      {"x", {{"name", first->x.name}, {"unit", first->x.unit}, {"log", wants_log_x(*first)}}},
                      {"y", {{"name", first->y.name}, {"unit", first->y.unit}, {"log", wants_log_y(*first)}}},
                      {"traces", std::move(traces)}});
  }
  if (x_max == 0) {  // no measured curve: the span of GPU caches and memory
    x_min = 1024;
    x_max = 1024.0 * 1024 * 1024;
  }

  json references = json::array();
  const auto add = [&](const std::string& name, const Results& r, bool checked) {
    json curves = json::object();
    for (const Headline& h : kHeadlines) curves[h.name] = reference_curve(r, h, x_min, x_max);
    references.push_back({{"name", name}, {"checked", checked}, {"curves", std::move(curves)}});
  };
  std::vector<std::string> given;
  for (const auto& run : runs)
    if (run.reference) {
      add(run.label, *run.results, true);
      given.push_back(squeezed(run.label));
    }
  const std::string device = runs[0].results->device.name;
  for (const auto& p : known_references()) {
    if (std::find(given.begin(), given.end(), squeezed(p.name)) != given.end()) continue;
    add(p.name, reference_as_results(p), given.empty() && !runs[0].reference && names_profile(device, p));
  }
  return {{"charts", std::move(charts)}, {"references", std::move(references)}};
}

Markup first_screen_section(const std::vector<ReportRun>& runs) {
  const BlockDiagram diagram = block_diagram(*runs[0].results);
  const json data = headline_data(runs);
  Markup out = "<section id=\"first-screen\" class=\"first-screen\">\n<div class=\"diagram\">\n";
  out += "<h2 id=\"diagram\">The device as measured</h2>\n";
  // The closed loop's verdict (docs/closed-loop.md): how much of the run the
  // model of this GPU reproduces.
  const Results& first = *runs[0].results;
  if (first.model.is_object() && first.model.contains("summary") && first.model["summary"].is_string())
    out += html::format("<p class=\"model-verdict\">{} The model's curves are drawn dashed over the measured "
                        "ones.</p>\n",
                        first.model["summary"].get<std::string>());
  else if (first.model.is_object() && first.model.contains("error") && first.model["error"].is_string())
    out += html::format("<p class=\"model-verdict\">Model: {}</p>\n", first.model["error"].get<std::string>());
  out += diagram.boxes.empty() ? Markup("<p class=\"note\">No findings to draw a diagram from.</p>\n")
                               : block_diagram_svg_markup(diagram);
  out += "</div>\n<div class=\"headline\">\n";
  for (const auto& c : data["charts"]) {
    const std::string name = c["name"].get<std::string>();
    const std::string title = c["title"].get<std::string>();
    out += html::format(
        "<figure id=\"headline-{0}\" class=\"headline-chart\">\n<h3>{1}</h3>\n<div "
        "class=\"chart-box\"><canvas "
        "id=\"canvas-headline-{0}\" role=\"img\" aria-label=\"{1}\"></canvas></div>\n<figcaption>Measured: "
        "lines; published figures: dotted steps over each level's footprints and triangles. <a "
        "href=\"#{2}\">The "
        "full chart</a>, with every sample's spread and the levels read off it.</figcaption>\n</figure>\n",
        name, title, c["chart"].get<std::string>());
  }
  if (data["charts"].empty())
    out += "<p class=\"note\">This run has no latency or bandwidth curve to draw.</p>\n";
  else {
    out += "<fieldset class=\"references\"><legend>Published figures beside it</legend>\n";
    for (size_t i = 0; i < data["references"].size(); ++i) {
      const json& r = data["references"][i];
      out += html::format(
          "<label><input type=\"checkbox\" class=\"reference-toggle\" data-reference=\"{}\"{}>"
          "<span class=\"swatch\" data-reference=\"{}\"></span>{}</label>\n",
          i, r["checked"].get<bool>() ? Markup(" checked") : Markup(), i, r["name"].get<std::string>());
    }
    out += "</fieldset>\n";
  }
  out += "</div>\n</section>\n";
  return out;
}

Markup unmeasured_section(const std::vector<ReportRun>& runs) {
  Markup rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& u : unmeasured(*runs[i].results)) {
      const Series* s = u.series.empty() ? nullptr : runs[i].index().series(u.series);
      const Markup link = s ? html::format(" <a href=\"#{}\">{}</a>", chart_anchor(s->id), s->id) : Markup();
      const bool multiline = u.reason.find('\n') != std::string::npos;
      rows += html::format("<tr><td>{}{}</td><td>{}</td><td>{}</td></tr>\n",
                           runs.size() > 1 ? runs[i].label + ": " : "", u.what,
                           multiline ? "<pre>" + html::text(u.reason) + "</pre>" : html::text(u.reason), link);
    }
  }
  if (rows.empty()) return Markup();
  return "<h2 id=\"not-measured\">Not measured</h2>\n<p class=\"note\">What the run could not measure, as "
         "the "
         "probes recorded it.</p>\n<table class=\"not-measured\">\n<tr><th>what</th><th>why</th><th>"
         "recorded in</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace gpuscope
