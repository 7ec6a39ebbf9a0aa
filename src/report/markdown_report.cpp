#include "report/markdown_report.hpp"
#include "report/reconcile_table.hpp"
#include "report/driver_section.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/finding_catalogue.hpp"
#include "report/format.hpp"
#include "report/graphics_section.hpp"
#include "report/matrix_numerics_table.hpp"
#include "report/unmeasured.hpp"

namespace gpuscope {

namespace {

std::string kind_of(const Finding& f) {
  return f.method.starts_with("spec") ? " (spec)" : f.method.starts_with("measurement") ? " (meas)" : "";
}

std::string cell_of(const Finding* f, bool reference) {
  if (!f) return "-";
  std::string s = value_with_interval(*f);
  if (reference) s += kind_of(*f);
  if (!reference && is_low_confidence(*f)) s += " ?";
  return markdown_cell(s);
}

}  // namespace

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n':
      case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Each pair of runs of one GPU: the counts, and every finding outside
// tolerance with its likely reasons (the tables above have every ratio).
std::string reconciliation_markdown(const std::vector<ReportRun>& runs) {
  using Status = ReconciledFinding::Status;
  std::string out;
  for (const ReconciledPair& p : reconciled_pairs(runs)) {
    const Reconciliation& rc = p.reconciliation;
    out += "### Reconciliation: " + markdown_cell(p.label_a) + " and " + markdown_cell(p.label_b) + "\n\n";
    out += markdown_cell(fmt::format("{} findings in both: {} within tolerance (sizes and latencies 10%, rates 5%, "
                                     "counts and yes/no exactly), {} outside, {} not compared; {} in one run only.",
                                     rc.both.size(), rc.count(Status::within), rc.count(Status::outside),
                                     rc.count(Status::not_compared), rc.only.size())) +
           "\n\n";
    if (rc.count(Status::outside) == 0) continue;
    out += "| finding | " + markdown_cell(p.label_a) + " | " + markdown_cell(p.label_b) +
           " | ratio | tolerance | likely reasons |\n"
           "|---|---|---|---|---|---|\n";
    for (const auto& r : rc.both) {
      if (r.status != Status::outside) continue;
      const ReconcileRow row = reconcile_row(r);
      std::string reasons;
      for (const auto& why : r.reasons) reasons += (reasons.empty() ? "" : "; ") + why;
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", markdown_cell(r.a->display.name),
                         markdown_cell(value_with_interval(*r.a)), markdown_cell(value_with_interval(*r.b)),
                         row.ratio, row.tolerance_percent.empty() ? "exact" : row.tolerance_percent,
                         markdown_cell(reasons));
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string format_markdown(const std::vector<ReportRun>& runs, const std::string& diagram_file) {
  if (runs.empty() || !runs[0].results) throw std::invalid_argument("format_markdown needs at least one run");
  const Results& main = *runs[0].results;
  const DeviceInfo& d = main.device;
  std::string out = "## gpuscope: " + markdown_cell(d.name.empty() ? d.id : d.name) + "\n\n";

  std::vector<std::string> facts;
  for (const auto& s : {d.vendor, d.type, d.api, d.driver_version.empty() ? "" : "driver " + d.driver_version})
    if (!s.empty()) facts.push_back(markdown_cell(s));
  if (d.compute_units) facts.push_back(fmt::format("{} compute units", d.compute_units));
  if (d.clock_mhz) facts.push_back(fmt::format("{} MHz", d.clock_mhz));
  if (d.global_mem_bytes) facts.push_back(format_bytes(static_cast<double>(d.global_mem_bytes)) + " memory");
  std::string line;
  for (const auto& f : facts) line += (line.empty() ? "" : " | ") + f;
  if (!line.empty()) out += line + "\n\n";
  if (main.run.contains("command") && main.run["command"].is_string()) {
    // A code span cannot hold its own delimiter; a run of backticks longer than any inside can.
    const std::string cmd = main.run["command"].get<std::string>();
    size_t longest = 0, run = 0;
    for (char c : cmd) longest = std::max(longest, run = (c == '`' ? run + 1 : 0));
    const std::string fence(longest + 1, '`');
    std::string flat = cmd;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    out += "Command: " + fence + " " + flat + " " + fence + " (gpuscope " + markdown_cell(main.tool_version) + ")\n\n";
  }
  // The closed loop's verdict (docs/closed-loop.md).
  if (main.model.is_object() && main.model.contains("summary") && main.model["summary"].is_string())
    out += markdown_cell(main.model["summary"].get<std::string>()) + "\n\n";
  for (size_t i = 1; i < runs.size(); ++i) {
    const DeviceInfo& o = runs[i].results->device;
    out += fmt::format("Beside it: **{}**{}\n\n", markdown_cell(runs[i].label),
                       runs[i].reference ? " (published figures: spec = vendor specification, meas = someone's "
                                           "measurement)"
                                         : ": " + markdown_cell(o.name.empty() ? o.id : o.name));
  }
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size(); ++j)
      if (!runs[i].reference && !runs[j].reference)
        out += fmt::format("**{}** and **{}**: {}.\n\n", markdown_cell(runs[i].label), markdown_cell(runs[j].label),
                           markdown_cell(identity_sentence(*runs[i].results, *runs[j].results)));

  if (!diagram_file.empty())
    out += "![Block diagram of " + markdown_cell(d.name.empty() ? d.id : d.name) + " as measured](" + diagram_file +
           ")\n\n";

  // Rows: runs[0]'s findings by area; a comparison adds the ids only the
  // other runs have, except a reference's (they would be all dashes).
  std::vector<std::string> ids;
  std::unordered_set<std::string> listed;
  for (const auto& run : runs) {
    if (&run != &runs[0] && run.reference) continue;
    for (const auto& f : run.results->findings)
      if (listed.insert(f.id).second) ids.push_back(f.id);
  }
  // How the first run that has an id shows it.
  std::unordered_map<std::string, const FindingDisplay*> display;
  for (const auto& run : runs)
    for (const auto& f : run.results->findings) display.try_emplace(f.id, &f.display);
  const auto shown = [&](const std::string& id) -> const FindingDisplay& { return *display.at(id); };
  // The graphics block of runs[0] (graphics_section.hpp) heads the area of
  // its findings; the table below still lists each one.
  const std::vector<GraphicsLine> graphics =
      runs[0].reference ? std::vector<GraphicsLine>{} : graphics_summary(*runs[0].results);
  bool graphics_shown = false;
  bool any_low = false;
  for (const auto& area : area_titles()) {
    std::vector<std::string> in_area;
    for (const auto& id : ids)
      if (shown(id).area == area) in_area.push_back(id);
    std::stable_sort(in_area.begin(), in_area.end(),
                     [&](const auto& a, const auto& b) { return shown(a).order < shown(b).order; });
    if (in_area.empty()) continue;
    out += "### " + area + "\n\n";
    // The matrix numerics table (matrix_numerics_table.hpp) heads the area
    // of its findings, as the graphics block does.
    if (!runs[0].reference && std::any_of(in_area.begin(), in_area.end(), [](const std::string& id) {
          return id.ends_with(".numerics.matches_model");
        }))
      out += matrix_numerics_markdown(*runs[0].results);
    const std::unordered_set<std::string> in_this_area(in_area.begin(), in_area.end());
    const bool has_graphics = std::any_of(graphics.begin(), graphics.end(), [&](const GraphicsLine& l) {
      return std::any_of(l.finding_ids.begin(), l.finding_ids.end(),
                         [&](const std::string& id) { return in_this_area.contains(id); });
    });
    if (has_graphics && !graphics_shown) {
      graphics_shown = true;
      out += std::string(runs.size() > 1 ? "At a glance, " + markdown_cell(runs[0].label) : "At a glance") + ":\n\n";
      for (const auto& l : graphics)
        out += fmt::format("- {}: {} (confidence {:.2f})\n", markdown_cell(l.label), markdown_cell(l.text),
                           l.confidence);
      out += "\n";
    }
    out += "| finding | ";
    std::string rule = "|---|";
    if (runs.size() == 1) {
      out += "value | confidence | evidence |\n";
      rule += "---|---|---|\n";
    } else {
      for (const auto& run : runs) {
        out += markdown_cell(run.label) + " | ";
        rule += "---|";
      }
      for (size_t i = 1; i < runs.size(); ++i) {
        out += markdown_cell(runs[i].label + " / " + runs[0].label) + " | ";
        rule += "---|";
      }
      out += "\n";
      rule += "\n";
    }
    out += rule;
    for (const auto& id : in_area) {
      std::vector<const Finding*> per_run;
      for (const auto& run : runs) per_run.push_back(run.index().finding(id));
      out += "| " + markdown_cell(shown(id).name) + " | ";
      if (runs.size() == 1) {
        const Finding& f = *per_run[0];
        std::string evidence;
        for (const auto& e : f.evidence) evidence += (evidence.empty() ? "" : ", ") + markdown_cell(e);
        out += cell_of(&f, false) + " | " + fmt::format("{:.2f}", f.confidence) + " | " + evidence + " |\n";
        any_low = any_low || is_low_confidence(f);
        continue;
      }
      for (size_t i = 0; i < runs.size(); ++i) {
        out += cell_of(per_run[i], runs[i].reference) + " | ";
        any_low = any_low || (per_run[i] && !runs[i].reference && is_low_confidence(*per_run[i]));
      }
      for (size_t i = 1; i < runs.size(); ++i) {
        const auto* a = per_run[0] ? std::get_if<double>(&per_run[0]->value) : nullptr;
        const auto* b = per_run[i] ? std::get_if<double>(&per_run[i]->value) : nullptr;
        out += (a && b && *a != 0) ? fmt::format("{:.3g}x | ", *b / *a) : " | ";
      }
      out += "\n";
    }
    out += "\n";
  }
  if (ids.empty()) out += "No findings.\n\n";
  if (any_low) out += "? confidence below 0.5: treat as a guess.\n\n";

  out += reconciliation_markdown(runs);

  std::string missing;
  for (const auto& run : runs)
    for (const auto& u : unmeasured(*run.results))
      missing += fmt::format("- {}{}: {}\n", runs.size() > 1 ? markdown_cell(run.label) + " " : "",
                             markdown_cell(u.what), markdown_cell(u.reason.substr(0, u.reason.find('\n'))));
  if (!missing.empty()) out += "### Not measured\n\n" + missing + "\n";
  out += driver_section_markdown(main);
  return out;
}

}  // namespace gpuscope
