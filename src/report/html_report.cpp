#include "report/html_report.hpp"
#include "report/reconcile_table.hpp"
#include "report/driver_section.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "report/assets.hpp"
#include "report/html_builder.hpp"
#include "report/first_screen.hpp"
#include "report/graphics_section.hpp"
#include "report/matrix_numerics_table.hpp"
#include "core/finding_catalogue.hpp"
#include "report/format.hpp"

namespace gpuscope {

namespace {

using nlohmann::json;
using html::Markup;

// An asset inlined in a <script> or <style> element must not close it early.
Markup inline_asset(std::string_view name, std::string_view closing) {
  const std::string_view text = asset_text(name);
  if (text.find(closing) != std::string_view::npos)
    throw std::logic_error(fmt::format("asset {} contains {}: cannot be inlined", name, closing));
  return Markup::trusted(std::string(text));
}

// JSON inside a <script> element: json_for_script leaves no < > & in it,
// so no text in it can close the element or open another.
Markup script_json(const json& j) { return Markup::trusted(json_for_script(j)); }

// "Chart.js v3.9.1" from the library's licence banner, for the footer.
std::string chart_library_version() {
  const std::string_view js = asset_text("chart.min.js");
  const size_t at = js.find("Chart.js v");
  if (at == std::string_view::npos) return "Chart.js";
  const size_t end = js.find_first_of(" \n\r*", at + 10);
  return std::string(js.substr(at, end - at));
}

// Series ids in order of first appearance over the runs (runs[0] first).
std::vector<std::string> series_ids(const std::vector<ReportRun>& runs) {
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const auto& run : runs)
    for (const auto& s : run.results->series)
      if (seen.insert(s.id).second) ids.push_back(s.id);
  return ids;
}

// Finding ids grouped by area, in area order, then as the runs list them.
// `measured`: ids some run measured (a reference's other values are listed
// apart); else the ids only references have.
std::vector<std::pair<std::string, std::vector<std::string>>> findings_by_area(const std::vector<ReportRun>& runs,
                                                                               bool measured = true) {
  std::vector<std::pair<std::string, std::vector<std::string>>> areas;
  std::unordered_map<std::string, size_t> area_at;
  for (const auto& title : area_titles()) {
    area_at.try_emplace(title, areas.size());
    areas.emplace_back(title, std::vector<std::string>{});
  }
  const auto in_a_run = [&](const std::string& id) {
    return std::any_of(runs.begin(), runs.end(), [&](const ReportRun& r) {
      return (!r.reference || &r == &runs[0]) && r.index().finding(id);
    });
  };
  // Each id's rank, from the first run that has it (core/finding_catalogue.hpp).
  std::unordered_map<std::string, int> order;
  for (const auto& run : runs) {
    for (const auto& f : run.results->findings) {
      const auto area = area_at.find(f.display.area);
      if (area == area_at.end() || order.contains(f.id) || in_a_run(f.id) != measured) continue;
      order.emplace(f.id, f.display.order);
      areas[area->second].second.push_back(f.id);
    }
  }
  // Within an area, by rank, then as listed.
  for (auto& [title, ids] : areas)
    std::stable_sort(ids.begin(), ids.end(),
                     [&](const std::string& a, const std::string& b) { return order.at(a) < order.at(b); });
  std::erase_if(areas, [](const auto& a) { return a.second.empty(); });
  return areas;
}

// A scalar finding's value, for ratios; none for booleans and lists.
std::optional<double> scalar(const Finding& f) {
  if (const auto* d = std::get_if<double>(&f.value)) return *d;
  return std::nullopt;
}

// ---- Chart data --------------------------------------------------------------

json point_row(const Point& p, const std::string& source) {
  json lo = nullptr, hi = nullptr;
  if (!p.samples.empty()) {
    const auto [mn, mx] = std::minmax_element(p.samples.begin(), p.samples.end());
    if (std::isfinite(*mn) && std::isfinite(*mx)) {
      lo = *mn;
      hi = *mx;
    }
  }
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json row = json::array({num(p.x), num(p.y), lo, hi});
  if (!source.empty()) row.push_back(source);
  return row;
}

// A marker's label: the unit is on the axis, so a cache level's "L1
// latency" says no more than "L1": "L1 16.2 ns".
std::string marker_label(const Finding& f) {
  const std::string& label = f.display.level.empty() ? f.display.name : f.display.level;
  return label + " " + format_value(f);
}

// The markers a run's findings put on a series: a finding citing the series
// whose unit is the x unit is a vertical line (a knee: a capacity), the y
// unit a horizontal one (a level: a latency, a bandwidth).
json markers_for(const Series& axis_source, size_t run_index, const ReportRun& run) {
  json out = json::array();
  for (const Finding* cites : run.index().citing(axis_source.id)) {
    const Finding& f = *cites;
    const auto v = scalar(f);
    if (!v || !std::isfinite(*v)) continue;
    const char* axis = nullptr;
    if (!f.unit.empty() && f.unit == axis_source.x.unit) axis = "x";
    else if (!f.unit.empty() && f.unit == axis_source.y.unit) axis = "y";
    if (!axis) continue;
    out.push_back({{"run", run_index},
                   {"axis", axis},
                   {"value", *v},
                   {"low", f.low ? json(*f.low) : json(nullptr)},
                   {"high", f.high ? json(*f.high) : json(nullptr)},
                   {"label", marker_label(f)},
                   {"finding", f.id}});
  }
  return out;
}

// The model's twin of series `id` in `r`'s replay (docs/closed-loop.md), as
// a dashed guide over the measured trace at the same points; null when the
// run has no replay of it.
json model_guide(const Results& r, const Series& s, size_t run_index, const std::vector<size_t>& drawn) {
  if (!r.model.is_object() || !r.model.contains("replay")) return nullptr;
  const json& replay = r.model["replay"];
  if (!replay.is_object() || !replay.contains("series") || !replay["series"].is_array()) return nullptr;
  for (const auto& t : replay["series"]) {
    if (!t.is_object() || !t.contains("id") || t["id"] != s.id || !t.contains("modelled_y") ||
        !t["modelled_y"].is_array() || t["modelled_y"].size() != s.points.size())
      continue;
    json points = json::array();
    for (const size_t k : drawn)
      if (t["modelled_y"][k].is_number()) points.push_back(json::array({s.points[k].x, t["modelled_y"][k]}));
    if (points.empty()) return nullptr;
    const double median = t.contains("median_error") && t["median_error"].is_number() ? t["median_error"].get<double>() : 0;
    const bool reproduced = t.contains("reproduced") && t["reproduced"].is_boolean() && t["reproduced"].get<bool>();
    return {{"run", run_index},
            {"label", fmt::format("model: {:.1f}% off{}", 100 * median, reproduced ? "" : " (missed)")},
            {"points", std::move(points)}};
  }
  return nullptr;
}

json chart_data(const std::vector<ReportRun>& runs) {
  json runs_json = json::array();
  for (const auto& run : runs) runs_json.push_back({{"label", run.label}, {"reference", run.reference}});
  json charts = json::array();
  for (const auto& id : series_ids(runs)) {
    if (drawn_as_picture(id)) continue;
    // The axes come from the first run that has the series.
    const Series* first = nullptr;
    for (const auto& run : runs)
      if (!first) first = run.index().series(id);
    json traces = json::array();
    json markers = json::array();
    json guides = json::array();
    bool log_x = wants_log_x(*first), log_y = wants_log_y(*first);
    for (size_t i = 0; i < runs.size(); ++i) {
      const Results& r = *runs[i].results;
      const Series* s = runs[i].index().series(id);
      if (s) {
        json points = json::array();
        const json* sources = s->meta.is_object() && s->meta.contains("sources") && s->meta["sources"].is_array()
                                  ? &s->meta["sources"]
                                  : nullptr;
        const std::vector<size_t> drawn = drawn_points(*s);
        for (const size_t k : drawn) {
          const bool named = sources && k < sources->size() && (*sources)[k].is_string();
          points.push_back(point_row(s->points[k], named ? (*sources)[k].get<std::string>() : ""));
        }
        traces.push_back({{"run", i}, {"points", std::move(points)}});
        if (json g = model_guide(r, *s, i, drawn); !g.is_null()) guides.push_back(std::move(g));
        // A reference's few points must not decide the axes of a measured curve.
        if (!runs[i].reference && s != first) {
          log_x = log_x && wants_log_x(*s);
          log_y = log_y && wants_log_y(*s);
        }
      }
      // The tile-memory chart's knee is read through its own geometry (graphics_section.hpp).
      if (shown_in_graphics_section(id)) {
        json overlays = tile_memory_overlays(s ? *s : *first, i, r);
        for (auto& m : overlays["markers"]) markers.push_back(std::move(m));
        for (auto& g : overlays["guides"]) guides.push_back(std::move(g));
      } else {
        for (auto& m : markers_for(*first, i, runs[i])) markers.push_back(std::move(m));
      }
    }
    charts.push_back({{"id", id},
                      {"anchor", chart_anchor(id)},
                      {"x", {{"name", first->x.name}, {"unit", first->x.unit}, {"log", log_x}}},
                      {"y", {{"name", first->y.name}, {"unit", first->y.unit}, {"log", log_y}}},
                      {"traces", std::move(traces)},
                      {"markers", std::move(markers)},
                      {"guides", std::move(guides)}});
  }
  return {{"runs", std::move(runs_json)}, {"charts", std::move(charts)}};
}

// ---- HTML sections -----------------------------------------------------------

Markup swatch(size_t run_index) {
  return html::format("<span class=\"swatch\" style=\"background:{}\"></span>", run_colour(run_index));
}

Markup device_section(const std::vector<ReportRun>& runs) {
  const auto count = [](uint64_t v) { return v ? fmt::format("{}", v) : std::string(); };
  const auto bytes = [](uint64_t v) { return v ? format_bytes(static_cast<double>(v)) : std::string(); };
  using Getter = std::function<std::string(const DeviceInfo&)>;
  const std::vector<std::pair<const char*, Getter>> rows = {
      {"name", [](const DeviceInfo& d) { return d.name; }},
      {"vendor", [](const DeviceInfo& d) { return d.vendor; }},
      {"type", [](const DeviceInfo& d) { return d.type; }},
      {"id", [](const DeviceInfo& d) { return d.id; }},
      {"API", [](const DeviceInfo& d) { return d.api; }},
      {"driver", [](const DeviceInfo& d) { return d.driver_version; }},
      {"platform", [](const DeviceInfo& d) { return d.platform; }},
      {"device uuid", [](const DeviceInfo& d) { return d.uuid; }},
      {"PCI address", [](const DeviceInfo& d) { return d.pci_address; }},
      {"compute units", [&](const DeviceInfo& d) { return count(d.compute_units); }},
      {"clock (reported)", [](const DeviceInfo& d) { return d.clock_mhz ? fmt::format("{} MHz", d.clock_mhz) : ""; }},
      {"global memory", [&](const DeviceInfo& d) { return bytes(d.global_mem_bytes); }},
      {"largest allocation", [&](const DeviceInfo& d) { return bytes(d.max_alloc_bytes); }},
      {"local memory",
       [&](const DeviceInfo& d) {
         return d.local_mem_bytes ? bytes(d.local_mem_bytes) + (d.local_mem_dedicated ? " (dedicated)" : " (global)")
                                  : "";
       }},
      {"global cache (reported)", [&](const DeviceInfo& d) { return bytes(d.global_cache_bytes); }},
      {"cache line (reported)",
       [](const DeviceInfo& d) { return d.global_cache_line_bytes ? fmt::format("{} B", d.global_cache_line_bytes) : ""; }},
      {"max work-group size", [&](const DeviceInfo& d) { return count(d.max_work_group_size); }},
      {"vendor queries", [](const DeviceInfo& d) { return d.vendor_info.empty() ? "" : d.vendor_info.dump(); }},
  };
  Markup out = "<h2 id=\"device\">Device</h2>\n<table class=\"device\">\n";
  if (runs.size() > 1) {
    out += "<tr><th></th>";
    for (size_t i = 0; i < runs.size(); ++i) out += "<th>" + swatch(i) + html::text(runs[i].label) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& [name, get] : rows) {
    Markup cells;
    bool any = false;
    for (const auto& run : runs) {
      const std::string v = get(run.results->device);
      any = any || !v.empty();
      cells += "<td>" + html::text(v) + "</td>";
    }
    if (any) out += html::format("<tr><th>{}</th>{}</tr>\n", name, cells);
  }
  out += "</table>\n";
  // Extensions are long: folded away.
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& ext = runs[i].results->device.extensions;
    if (ext.empty()) continue;
    std::string list;
    for (const auto& e : ext) list += (list.empty() ? "" : " ") + e;
    out += html::format("<details><summary>{} extensions of {}</summary><p class=\"note\">{}</p></details>\n",
                        ext.size(), runs[i].label, list);
  }
  return out;
}

Markup run_section(const std::vector<ReportRun>& runs) {
  Markup out = "<h2 id=\"run\">How this was measured</h2>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const Results& r = *runs[i].results;
    if (runs.size() > 1) out += "<h3>" + swatch(i) + html::text(runs[i].label) + "</h3>\n";
    if (runs[i].reference) {
      const json& about = r.run.contains("about") ? r.run["about"] : json();
      out += "<p class=\"note\">Published figures, not a run: " +
             html::text(about.is_string() ? about.get<std::string>() : std::string()) +
             " Each value's source is in its row's method column.</p>\n";
      continue;
    }
    const std::string command = r.run.contains("command") && r.run["command"].is_string()
                                    ? r.run["command"].get<std::string>()
                                    : std::string("(not recorded)");
    out += "<table>\n";
    out += "<tr><th>command</th><td><pre class=\"command\">" + html::text(command) + "</pre></td></tr>\n";
    out += "<tr><th>tool</th><td>gpuscope " + html::text(r.tool_version) + "</td></tr>\n";
    if (r.run.contains("started_utc") && r.run["started_utc"].is_string())
      out += "<tr><th>started</th><td>" + html::text(r.run["started_utc"].get<std::string>()) + "</td></tr>\n";
    if (r.run.contains("quick") && r.run["quick"].is_boolean() && r.run["quick"].get<bool>())
      out += "<tr><th>mode</th><td>--quick: fewer points and samples</td></tr>\n";
    if (r.run.contains("probes") && r.run["probes"].is_object() && !r.run["probes"].empty()) {
      Markup probes;
      for (const auto& [name, p] : r.run["probes"].items()) {
        const double wall = p.is_object() && p.contains("wall_s") && p["wall_s"].is_number() ? p["wall_s"].get<double>()
                                                                                             : std::nan("");
        if (!probes.empty()) probes += ", ";
        probes += html::text(name) + (std::isfinite(wall) ? html::format(" {:.1f} s", wall) : Markup());
      }
      out += "<tr><th>probes</th><td>" + probes + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

Markup evidence_links(const Finding& f, const std::unordered_set<std::string>& charted) {
  Markup out;
  for (const auto& e : f.evidence) {
    const bool has_chart = charted.contains(e);
    if (!out.empty()) out += ", ";
    out += has_chart ? html::format("<a href=\"#{}\">{}</a>", chart_anchor(e), e) : html::text(e);
  }
  return out;
}

Markup value_cell(const Finding* f) {
  if (!f) return "<td class=\"num dim\">-</td>";
  const Markup mark =
      is_low_confidence(*f) ? Markup(" <span class=\"low\" title=\"confidence below 0.5\">?</span>") : Markup();
  const std::string interval = format_interval(*f);
  return html::format("<td class=\"num\">{}{}{}</td>", format_value(*f), mark,
                      interval.empty() ? Markup() : html::format("<br><span class=\"dim\">{}</span>", interval));
}

Markup findings_tables(const std::vector<ReportRun>& runs, bool measured) {
  const auto ids_charted = series_ids(runs);
  const std::unordered_set<std::string> charted(ids_charted.begin(), ids_charted.end());
  Markup out;
  const bool single = runs.size() == 1;
  for (const auto& [area, ids] : findings_by_area(runs, measured)) {
    out += "<h3>" + html::text(area) + "</h3>\n<table class=\"findings\">\n<tr><th class=\"name\">finding</th>";
    for (size_t i = 0; i < runs.size(); ++i)
      out += "<th class=\"value\">" + (single ? Markup("value") : swatch(i) + html::text(runs[i].label)) +
             "</th>";
    for (size_t i = 1; i < runs.size(); ++i)
      out += html::format("<th class=\"ratio\" title=\"{} / {}\">ratio</th>", runs[i].label, runs[0].label);
    out += single ? Markup("<th class=\"conf\">confidence</th>") : Markup();
    out += "<th class=\"evidence\">evidence</th><th>method and notes</th></tr>\n";
    for (const auto& id : ids) {
      std::vector<const Finding*> per_run;
      for (const auto& run : runs) per_run.push_back(run.index().finding(id));
      const Finding* any = *std::find_if(per_run.begin(), per_run.end(), [](const Finding* f) { return f; });
      out += html::format("<tr id=\"{}\"><td>{}<br><code class=\"dim\">{}</code></td>", finding_anchor(id),
                          any->display.name, id);
      for (const Finding* f : per_run) out += value_cell(f);
      for (size_t i = 1; i < runs.size(); ++i) {
        const auto a = per_run[0] ? scalar(*per_run[0]) : std::nullopt;
        const auto b = per_run[i] ? scalar(*per_run[i]) : std::nullopt;
        out += (a && b && *a != 0) ? html::format("<td class=\"num\">{:.3g}x</td>", *b / *a) : Markup("<td></td>");
      }
      if (single) out += html::format("<td class=\"num\">{:.2f}</td>", any->confidence);
      Markup methods;
      for (size_t i = 0; i < runs.size(); ++i) {
        const Finding* f = per_run[i];
        if (!f || f->method.empty()) continue;
        // A reference's method is its source: short, and the point of the row.
        const Markup method = runs[i].reference
                                  ? html::text(f->method)
                                  : html::format("<details><summary>method</summary>{}</details>", f->method);
        methods += "<div>" + (single ? Markup() : swatch(i)) + method +
                   (f->note.empty() ? Markup() : html::format("<span class=\"note\">{}</span>", f->note)) + "</div>";
      }
      out += "<td>" + evidence_links(*any, charted) + "</td><td class=\"note\">" + methods + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

// Which measured runs are one GPU, said for every pair.
Markup identity_notes(const std::vector<ReportRun>& runs) {
  Markup out;
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size(); ++j) {
      if (runs[i].reference || runs[j].reference) continue;
      out += "<p class=\"identity\">" + swatch(i) + html::text(runs[i].label) + " and " + swatch(j) +
             html::text(runs[j].label) + ": " + html::text(identity_sentence(*runs[i].results, *runs[j].results)) +
             (match_device_identity(runs[i].results->device, runs[j].results->device).verdict ==
                      DeviceIdentityMatch::Verdict::same
                  ? html::format(" (<a href=\"#reconcile-{}-{}\">reconciled below</a>)", i + 1, j + 1)
                  : Markup()) +
             "</p>\n";
    }
  return out;
}

// Every pair of runs of one GPU, finding by finding (reconcile_table.hpp).
Markup reconciliation_section(const std::vector<ReportRun>& runs) {
  using Status = ReconciledFinding::Status;
  Markup out;
  for (const ReconciledPair& p : reconciled_pairs(runs)) {
    const Reconciliation& rc = p.reconciliation;
    const std::string &la = p.label_a, &lb = p.label_b;
    out += html::format("<h2 id=\"reconcile-{}-{}\">Reconciliation: {}{} and {}{}</h2>\n", p.a + 1, p.b + 1,
                        swatch(p.a), la, swatch(p.b), lb);
    out += "<p>" + html::text(p.identity) + ". " +
           html::text(fmt::format("{} findings in both: {} within tolerance, {} outside, {} not compared; {} only "
                                   "in {}, {} only in {}.",
                                   rc.both.size(), rc.count(Status::within), rc.count(Status::outside),
                                   rc.count(Status::not_compared), p.only_in_a, la, rc.only.size() - p.only_in_a,
                                   lb)) +
           "</p>\n<p class=\"note\">Tolerance by the finding's unit: sizes and latencies 10%, rates (per second, "
           "per clock, MHz, ratios of rates) 5%, counts and yes/no exactly; the larger value over the smaller "
           "decides. Each finding outside it lists the likely reasons the two results record.</p>\n";
    out += "<table class=\"findings reconcile\">\n<tr><th class=\"name\">finding</th><th class=\"value\">" +
           swatch(p.a) + html::text(la) + "</th><th class=\"value\">" + swatch(p.b) + html::text(lb) +
           "</th><th class=\"ratio\">ratio</th><th class=\"conf\">tolerance</th><th>verdict and likely "
           "reasons</th></tr>\n";
    for (const auto& r : rc.both) {
      const ReconcileRow row = reconcile_row(r);
      Markup reasons;
      for (const auto& why : r.reasons) reasons += "<li>" + html::text(why) + "</li>";
      out += html::format(
          "<tr class=\"{}\"><td><a href=\"#{}\">{}</a><br><code class=\"dim\">{}</code></td>{}{}<td "
          "class=\"num\">{}</td><td>{}</td><td>{}{}</td></tr>\n",
          r.status == Status::outside ? "outside" : "", finding_anchor(r.id), r.a->display.name, r.id,
          value_cell(r.a), value_cell(r.b), row.ratio,
          row.tolerance_percent.empty() ? row.tolerance_class : row.tolerance_class + " " + row.tolerance_percent,
          row.verdict, reasons.empty() ? Markup() : "<ul>" + reasons + "</ul>");
    }
    out += "</table>\n";
    if (!rc.only.empty()) {
      out += "<h3>In one run only</h3>\n<table class=\"findings\">\n<tr><th class=\"name\">finding</th>"
             "<th class=\"value\">value</th><th>why the other run has none</th></tr>\n";
      for (const auto& o : rc.only)
        out += html::format("<tr><td>{}<br><code class=\"dim\">{}</code></td>{}<td>{}{}</td></tr>\n",
                            o.finding->display.name, o.id, value_cell(o.finding), swatch(o.in_a ? p.b : p.a),
                            o.reason);
      out += "</table>\n";
    }
  }
  return out;
}

Markup findings_section(const std::vector<ReportRun>& runs) {
  Markup out = "<h2 id=\"findings\">Findings</h2>\n";
  out += "<p class=\"note\">Each value with its interval; <span class=\"low\">?</span> marks confidence below "
         "0.5 (a guess). The evidence links go to the chart each value was read from.</p>\n";
  out += findings_tables(runs, true);
  if (findings_by_area(runs, true).empty()) out += "<p>No findings.</p>\n";
  if (!findings_by_area(runs, false).empty())
    out += "<details id=\"unmeasured\"><summary>Published figures this run did not measure</summary>\n" +
           findings_tables(runs, false) + "</details>\n";
  return out;
}

Markup charts_section(const std::vector<ReportRun>& runs) {
  Markup out = "<h2 id=\"charts\">Charts</h2>\n";
  auto ids = series_ids(runs);
  const size_t all = ids.size();
  std::erase_if(ids, shown_in_graphics_section);
  if (ids.empty())
    return out + (all ? Markup("<p>Every series is drawn in the graphics section above.</p>\n")
                      : Markup("<p>No series.</p>\n"));
  out += "<p class=\"note\">Lines: the measured estimate of each point; shading: from its fastest to its slowest "
         "sample. Dashed lines: levels and knees read off the curve, shaded over their interval";
  if (std::any_of(runs.begin(), runs.end(), [](const ReportRun& r) { return r.reference; }))
    out += "; dotted lines and triangles: published figures";
  out += ".</p>\n<div class=\"charts\">\n";
  for (const auto& id : ids) {
    const Series* first = nullptr;
    for (const auto& run : runs)
      if (!first) first = run.index().series(id);
    std::unordered_set<std::string> anchors;
    Markup cited;
    for (const auto& run : runs) {
      for (const Finding* f : run.index().citing(id)) {
        const std::string anchor = finding_anchor(f->id);
        if (!anchors.insert(anchor).second) continue;
        if (!cited.empty()) cited += ", ";
        cited += html::format("<a href=\"#{}\">{}</a>", anchor, f->id);
      }
    }
    const std::string anchor = chart_anchor(id);
    out += html::format(
        "<figure id=\"{0}\">\n<h3>{1}</h3>\n<div class=\"chart-box\"><canvas id=\"canvas-{0}\" role=\"img\" "
        "aria-label=\"{2} against {3}\"></canvas></div>\n<figcaption>{2} against {3}, {4}{5}</figcaption>\n"
        "</figure>\n",
        anchor, id, first->y.name, first->x.name, points_caption(*first),
        cited.empty() ? Markup() : "; findings: " + cited);
  }
  return out + "</div>\n";
}

}  // namespace

std::string html_escape(const std::string& s) { return html::escape(s); }

std::vector<size_t> drawn_points(const Series& s) {
  const size_t n = s.points.size();
  std::vector<size_t> out;
  if (n <= kChartPointsDrawn) {
    out.resize(n);
    for (size_t k = 0; k < n; ++k) out[k] = k;
    return out;
  }
  constexpr size_t kRuns = kChartPointsDrawn / 2;
  out.reserve(kChartPointsDrawn);
  // A NaN y is neither the lowest nor the highest while a number is there.
  const auto below = [&](size_t a, size_t b) {
    const double ya = s.points[a].y, yb = s.points[b].y;
    return std::isnan(yb) ? !std::isnan(ya) : ya < yb;
  };
  const auto above = [&](size_t a, size_t b) {
    const double ya = s.points[a].y, yb = s.points[b].y;
    return std::isnan(yb) ? !std::isnan(ya) : ya > yb;
  };
  for (size_t run = 0; run < kRuns; ++run) {
    const size_t from = run * n / kRuns, to = (run + 1) * n / kRuns;
    size_t lo = from, hi = from;
    for (size_t k = from + 1; k < to; ++k) {
      if (below(k, lo)) lo = k;
      if (above(k, hi)) hi = k;
    }
    out.push_back(std::min(lo, hi));
    if (lo != hi) out.push_back(std::max(lo, hi));
  }
  return out;
}

std::string points_caption(const Series& s) {
  const size_t n = s.points.size();
  if (n <= kChartPointsDrawn) return fmt::format("{} points", n);
  return fmt::format("{} points, drawn as the lowest and highest of each of {} runs of them", n,
                     kChartPointsDrawn / 2);
}

std::string json_for_script(const json& j) {
  // Invalid UTF-8 from a driver is replaced rather than thrown on.
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string run_colour(size_t run_index) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
  return kPalette[run_index % 7];
}

std::string finding_anchor(const std::string& finding_id) { return "finding-" + chart_anchor(finding_id).substr(6); }

std::string chart_anchor(const std::string& series_id) {
  std::string out = "chart-";
  for (char c : series_id) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    out += keep ? c : '-';
  }
  return out;
}

namespace {

// The axis scale a series' meta asks for ("log"/"linear"), else whether its
// values are positive and span at least `min_span`.
bool wants_log(const Series& s, const char* meta_key, bool x, double min_span) {
  if (s.meta.is_object() && s.meta.contains(meta_key) && s.meta[meta_key].is_string())
    return s.meta[meta_key].get<std::string>() == "log";
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& p : s.points) {
    const double v = x ? p.x : p.y;
    if (!std::isfinite(v)) continue;
    if (v <= 0) return false;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi > 0 && hi / lo >= min_span;
}

}  // namespace

bool wants_log_x(const Series& s) { return wants_log(s, "x_scale", true, 16); }
bool wants_log_y(const Series& s) { return wants_log(s, "y_scale", false, 10); }

std::string render_html_report(const std::vector<ReportRun>& runs) {
  if (runs.empty() || std::any_of(runs.begin(), runs.end(), [](const ReportRun& r) { return !r.results; }))
    throw std::invalid_argument("render_html_report needs at least one run");
  const Results& main = *runs[0].results;
  const std::string device = main.device.name.empty() ? main.device.id : main.device.name;
  std::string title = "gpuscope: " + device;
  for (size_t i = 1; i < runs.size(); ++i) title += (i == 1 ? " vs " : ", ") + runs[i].label;

  const Markup graphics = graphics_section_html(runs);
  Markup html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += html::format("<meta name=\"generator\" content=\"gpuscope {}\">\n", GPUSCOPE_VERSION);
  html += html::format("<title>{}</title>\n", title);
  // Counts script errors for the real-browser test (and a curious reader).
  html += "<script>window.gpuscopeErrors = []; window.addEventListener('error', function (e) { "
          "window.gpuscopeErrors.push(String(e.message)); });</script>\n";
  html += "<style>\n" + inline_asset("report.css", "</style") + "\n</style>\n</head>\n<body>\n";
  html += html::format("<h1>{}</h1>\n", title);
  html += html::format("<p class=\"dim\">{}{} | <a href=\"#findings\">findings</a>{} | <a href=\"#charts\">charts</a>"
                       " | <a href=\"#device\">device</a> | <a href=\"#run\">command</a></p>\n",
                       main.device.id, main.tool_version.empty() ? Markup() : " | gpuscope " + html::text(main.tool_version),
                       graphics.empty() ? Markup() : Markup(" | <a href=\"#graphics\">graphics</a>"));
  html += identity_notes(runs);
  html += first_screen_section(runs);
  html += unmeasured_section(runs);
  html += reconciliation_section(runs);
  html += findings_section(runs);
  html += matrix_numerics_html(main);
  html += graphics;
  html += charts_section(runs);
  html += device_section(runs);
  html += driver_section_html(main);
  html += run_section(runs);
  html += html::format("<p class=\"dim\">Written by gpuscope {}; charts drawn by {} (MIT licence), embedded in this "
                       "file.</p>\n",
                       GPUSCOPE_VERSION, chart_library_version());
  html += "<script type=\"application/json\" id=\"gpuscope-data\">" + script_json(chart_data(runs)) + "</script>\n";
  html += "<script>\n" + inline_asset("chart.min.js", "</script") + "\n</script>\n";
  html += "<script>\n" + inline_asset("report.js", "</script") + "\n</script>\n";
  html += "<script type=\"application/json\" id=\"gpuscope-headline\">" + script_json(headline_data(runs)) +
          "</script>\n";
  html += "<script>\n" + inline_asset("headline.js", "</script") + "\n</script>\n";
  html += "</body>\n</html>\n";
  return html.str();
}

}  // namespace gpuscope
