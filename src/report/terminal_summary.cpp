#include "report/terminal_summary.hpp"

#include "core/printable.hpp"
#include "report/run_index.hpp"
#include "report/driver_section.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/finding_catalogue.hpp"
#include "report/block_diagram.hpp"
#include "report/block_diagram_text.hpp"
#include "report/format.hpp"
#include "report/graphics_section.hpp"
#include "report/reconcile.hpp"
#include "report/unmeasured.hpp"

namespace gpuscope {

namespace {

constexpr size_t kWidthColumns = 100;
// The mark of a finding below format's low-confidence line (is_low_confidence):
// a guess, which the legend explains.
constexpr std::string_view kLowConfidenceMark = "?";

}  // namespace

namespace {

// ---- Text ------------------------------------------------------------------

class Painter {
 public:
  explicit Painter(const SummaryStyle& style) : color_(style.color) {}
  std::string bold(std::string_view s) const { return paint(s, "\x1b[1m"); }
  std::string dim(std::string_view s) const { return paint(s, "\x1b[2m"); }
  std::string warn(std::string_view s) const { return paint(s, "\x1b[33m"); }

  // The slot after a value: the low-confidence mark, or blanks of its width
  // so that columns stay aligned either way.
  std::string mark(bool low_confidence) const {
    return low_confidence ? " " + warn(kLowConfidenceMark) : std::string(kLowConfidenceMark.size() + 1, ' ');
  }

 private:
  std::string paint(std::string_view s, const char* code) const {
    return color_ ? fmt::format("{}{}\x1b[0m", code, s) : std::string(s);
  }
  bool color_;
};

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string first_line_fitting(const std::string& s, size_t width) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

// Word-wraps `text` to kWidthColumns, every line starting with `indent` blanks.
std::string wrap(const std::string& text, size_t indent) {
  std::string out;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find_first_of(" \n", start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > kWidthColumns) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    if (!word.empty()) line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

}  // namespace

namespace {

// ---- Memory levels ---------------------------------------------------------

// Sorts L1 < L2 < ... < L10 < dram.
struct LevelOrder {
  static int rank(const std::string& level) {
    return level == "dram" ? std::numeric_limits<int>::max() : std::stoi(level.substr(1));
  }
  bool operator()(const std::string& a, const std::string& b) const { return rank(a) < rank(b); }
};

struct LevelRow {
  const Finding* capacity = nullptr;
  const Finding* latency = nullptr;
  const Finding* bandwidth = nullptr;
};

using LevelTable = std::map<std::string, LevelRow, LevelOrder>;

// The row cell a finding fills, if it is one of the table's three columns:
// "memory.L2.latency_ns" -> table["L2"].latency.
const Finding** table_cell(LevelTable& table, const Finding& f) {
  const std::string& column = f.display.column;
  if (f.display.level.empty()) return nullptr;
  if (column == "capacity") return &table[f.display.level].capacity;
  if (column == "latency") return &table[f.display.level].latency;
  if (column == "bandwidth") return &table[f.display.level].bandwidth;
  return nullptr;
}

// ---- Sections --------------------------------------------------------------

std::string format_header(const Results& r, const Painter& paint) {
  const DeviceInfo& d = r.device;
  std::vector<std::string> facts = {d.name.empty() ? d.id : d.name};
  if (!d.vendor.empty()) facts.push_back(d.vendor);
  if (!d.type.empty()) facts.push_back(d.type);
  if (d.compute_units > 0) facts.push_back(fmt::format("{} compute units", d.compute_units));
  if (d.clock_mhz > 0) facts.push_back(fmt::format("{} MHz", d.clock_mhz));
  std::vector<std::string> origin;
  if (d.global_mem_bytes > 0)
    origin.push_back(format_bytes(static_cast<double>(d.global_mem_bytes)) + " memory");
  origin.insert(origin.end(), {d.id, d.api});
  if (!r.tool_version.empty()) origin.push_back("gpuscope " + r.tool_version);

  const auto join = [](const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts)
      if (!p.empty()) s += (s.empty() ? "" : " | ") + p;
    return s;
  };
  return paint.bold(join(facts)) + "\n" + paint.dim(join(origin)) + "\n";
}

struct Widths {
  size_t label = 0;
  size_t value = 0;
};

// The reference's kind of figure, from the method reference_as_results wrote.
std::string reference_kind(const Finding& f) {
  return f.method.starts_with("spec") ? "spec" : f.method.starts_with("measurement") ? "meas" : "";
}

// `ref`: the reference's value for the same id, printed beneath in its columns.
std::string format_finding_line(const Finding& f, const Finding* ref, const std::string& ref_name, const Widths& w,
                                const Painter& paint) {
  std::string out =
      fmt::format("  {}  {}{}  {}\n", pad(f.display.name, w.label), pad(value_with_interval(f), w.value),
                  paint.mark(is_low_confidence(f)), paint.dim(fmt::format("conf {:.2f}", f.confidence)));
  if (ref)
    out += paint.dim(fmt::format("  {}  {}{}  {} {}", pad("", w.label), pad(value_with_interval(*ref), w.value),
                                 paint.mark(false), ref_name, reference_kind(*ref))) +
           "\n";
  if (!f.note.empty()) out += paint.dim(wrap(f.note, 6));
  return out;
}

// `ref`: the reference's levels; each run level the reference also has gets a
// dim row beneath it in the same columns, named after the reference.
std::string format_level_table(const LevelTable& table, const LevelTable& ref, const std::string& ref_name,
                               const Painter& paint) {
  const bool any_bandwidth =
      std::any_of(table.begin(), table.end(), [](const auto& e) { return e.second.bandwidth; });
  const auto cell = [](const Finding* f) { return f ? value_with_interval(*f) : std::string("-"); };

  std::vector<std::string> headers = {"level", "capacity", "latency"};
  if (any_bandwidth) headers.emplace_back("bandwidth");
  std::vector<size_t> widths;
  for (const auto& h : headers) widths.push_back(h.size());
  for (const auto* t : {&table, &ref}) {
    for (const auto& [level, row] : *t) {
      if (t == &ref && !table.contains(level)) continue;
      widths[0] = std::max(widths[0], level.size());
      widths[1] = std::max(widths[1], cell(row.capacity).size());
      widths[2] = std::max(widths[2], cell(row.latency).size());
      if (any_bandwidth) widths[3] = std::max(widths[3], cell(row.bandwidth).size());
    }
  }

  // Every value column is followed by its mark slot, the header included.
  std::string header_line = "  " + pad(headers[0], widths[0]);
  for (size_t i = 1; i < headers.size(); ++i)
    header_line += "  " + pad(headers[i], widths[i]) + paint.mark(false);
  std::string out = paint.dim(header_line + "  conf") + "\n";

  std::string notes;
  for (const auto& [level, row] : table) {
    std::vector<const Finding*> cells = {row.capacity, row.latency};
    if (any_bandwidth) cells.push_back(row.bandwidth);
    std::string line = "  " + pad(level, widths[0]);
    double min_confidence = 1.0;
    for (size_t i = 0; i < cells.size(); ++i) {
      const Finding* f = cells[i];
      line += "  " + pad(cell(f), widths[i + 1]) + paint.mark(f && is_low_confidence(*f));
      if (f) min_confidence = std::min(min_confidence, f->confidence);
    }
    // A note the level's findings share is printed once, under the level's name.
    std::vector<std::string> printed;
    for (const Finding* f : cells) {
      if (!f || f->note.empty() || std::find(printed.begin(), printed.end(), f->note) != printed.end()) continue;
      const bool shared = std::count_if(cells.begin(), cells.end(),
                                        [&](const Finding* g) { return g && g->note == f->note; }) > 1;
      notes += wrap((shared ? level : f->display.name) + ": " + f->note, 6);
      printed.push_back(f->note);
    }
    out += line + "  " + paint.dim(fmt::format("{:.2f}", min_confidence)) + "\n";
    if (const auto it = ref.find(level); it != ref.end()) {
      std::vector<const Finding*> ref_cells = {it->second.capacity, it->second.latency};
      if (any_bandwidth) ref_cells.push_back(it->second.bandwidth);
      std::string ref_line = "  " + pad("", widths[0]);
      for (size_t i = 0; i < ref_cells.size(); ++i)
        ref_line += "  " + pad(cell(ref_cells[i]), widths[i + 1]) + paint.mark(false);
      out += paint.dim(ref_line + "  " + ref_name) + "\n";
    }
  }
  return out + paint.dim(notes);
}

// What could not be measured, each with its reason: the reason's first line
// word-wrapped beside the name, at most kReasonLines lines (a word longer
// than a line is cut).
std::string format_unmeasured(const std::vector<Unmeasured>& items, const Painter& paint) {
  constexpr size_t kReasonLines = 3;
  size_t what_width = 0;
  for (const auto& u : items) what_width = std::max(what_width, u.what.size());
  what_width = std::min<size_t>(what_width, 36);
  const size_t indent = 2 + what_width + 2;
  const size_t reason_width = kWidthColumns - indent;
  std::string out = "\n" + paint.bold("Not measured") + "\n";
  for (const auto& u : items) {
    std::vector<std::string> lines;
    std::string line;
    const std::string reason = u.reason.substr(0, u.reason.find('\n'));
    for (size_t start = 0; start < reason.size();) {
      size_t end = reason.find(' ', start);
      if (end == std::string::npos) end = reason.size();
      const std::string word = reason.substr(start, end - start);
      if (!line.empty() && line.size() + 1 + word.size() > reason_width) {
        lines.push_back(line);
        line.clear();
      }
      if (!word.empty()) line += (line.empty() ? "" : " ") + word;
      start = end + 1;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    if (lines.size() > kReasonLines) {
      lines.resize(kReasonLines);
      lines.back() += " ...";
    }
    const std::string what = u.what.size() > what_width ? u.what + "\n" + std::string(indent, ' ') : pad(u.what, what_width) + "  ";
    for (size_t i = 0; i < lines.size(); ++i)
      out += (i == 0 ? "  " + what : std::string(indent, ' ')) + first_line_fitting(lines[i], reason_width) + "\n";
  }
  return out;
}

// The graphics block (graphics_section.hpp): a label, then the line's
// items (", "-separated) filled into lines without splitting one, the least
// confidence after them, in a column the one-line entries share.
std::string format_graphics_block(const std::vector<GraphicsLine>& lines, const Painter& paint) {
  constexpr size_t kConfWidth = 11;  // "  conf 0.95"
  size_t label_width = 0;
  for (const auto& l : lines) label_width = std::max(label_width, l.label.size());
  const size_t indent = 2 + label_width + 2;
  const size_t text_width = kWidthColumns - indent - kConfWidth;
  std::vector<std::vector<std::string>> filled;
  size_t conf_column = 0;
  for (const auto& l : lines) {
    std::vector<std::string> rows(1);
    for (size_t start = 0; start <= l.text.size();) {
      size_t end = l.text.find(", ", start);
      if (end == std::string::npos) end = l.text.size();
      const std::string item = l.text.substr(start, end - start) + (end < l.text.size() ? "," : "");
      if (!rows.back().empty() && rows.back().size() + 1 + item.size() > text_width) rows.emplace_back();
      rows.back() += (rows.back().empty() ? "" : " ") + item;
      start = end + 2;
    }
    if (rows.size() == 1) conf_column = std::max(conf_column, std::min(rows[0].size(), text_width));
    filled.push_back(std::move(rows));
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& rows = filled[i];
    for (size_t k = 0; k < rows.size(); ++k) {
      const std::string head = k == 0 ? "  " + pad(lines[i].label, label_width) + "  " : std::string(indent, ' ');
      if (k + 1 < rows.size()) {
        out += head + rows[k] + "\n";
        continue;
      }
      out += head + pad(rows[k], conf_column) + "  " + paint.dim(fmt::format("conf {:.2f}", lines[i].confidence)) +
             "\n";
    }
  }
  return out;
}

}  // namespace

namespace {

// The findings of every run side by side by area, ratios to the first.
std::string format_plain_comparison(const std::vector<ReportRun>& runs, const Painter& paint) {
  std::string out;
  // Each id once, with how the first run that has it shows it.
  std::vector<std::string> ids;
  std::map<std::string, const FindingDisplay*> shown;
  for (const auto& run : runs)
    for (const auto& f : run.results->findings)
      if (shown.emplace(f.id, &f.display).second) ids.push_back(f.id);
  const auto cell = [&](const ReportRun& run, const std::string& id) {
    const Finding* f = run.index().finding(id);
    return f ? value_with_interval(*f) : std::string("-");
  };
  const auto ratio = [&](size_t i, const std::string& id) {
    const Finding* a = runs[0].index().finding(id);
    const Finding* b = runs[i].index().finding(id);
    const auto* x = a ? std::get_if<double>(&a->value) : nullptr;
    const auto* y = b ? std::get_if<double>(&b->value) : nullptr;
    return x && y && *x != 0 ? fmt::format("{:.3g}x", *y / *x) : std::string();
  };
  size_t label_width = 0;
  std::vector<size_t> widths(runs.size(), 0);
  for (const auto& id : ids) {
    label_width = std::max(label_width, shown[id]->name.size());
    for (size_t i = 0; i < runs.size(); ++i) widths[i] = std::max(widths[i], cell(runs[i], id).size());
  }
  label_width = std::min<size_t>(label_width, 30);
  for (size_t i = 0; i < runs.size(); ++i) widths[i] = std::max<size_t>(std::min<size_t>(widths[i], 36), 3);
  for (const auto& area : area_titles()) {
    std::vector<std::string> in_area;
    for (const auto& id : ids)
      if (shown[id]->area == area) in_area.push_back(id);
    std::stable_sort(in_area.begin(), in_area.end(),
                     [&](const auto& a, const auto& b) { return shown[a]->order < shown[b]->order; });
    if (in_area.empty()) continue;
    out += "\n" + paint.bold(area) + "\n";
    std::string head = "  " + pad("", label_width);
    for (size_t i = 0; i < runs.size(); ++i) head += "  " + pad(fmt::format("[{}]", i + 1), widths[i]) + paint.mark(false);
    for (size_t i = 1; i < runs.size(); ++i) head += fmt::format("  [{}]/[1]", i + 1);
    out += paint.dim(head) + "\n";
    for (const auto& id : in_area) {
      std::string line = "  " + pad(shown[id]->name, label_width);
      for (size_t i = 0; i < runs.size(); ++i) {
        const Finding* f = runs[i].index().finding(id);
        line += "  " + pad(cell(runs[i], id), widths[i]) + paint.mark(f && !runs[i].reference && is_low_confidence(*f));
      }
      for (size_t i = 1; i < runs.size(); ++i) line += "  " + pad(ratio(i, id), 7);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  if (ids.empty()) out += "\nNo findings.\n";
  return out;
}

}  // namespace

namespace {

std::string verdict_text(const ReconciledFinding& r) {
  using Status = ReconciledFinding::Status;
  if (r.status == Status::not_compared) return "not compared";
  if (r.status == Status::within) return "ok";
  const double tol = tolerance_of(r.tolerance);
  return tol > 0 ? fmt::format("OUTSIDE {:.0f}%", tol * 100) : std::string("DIFFERS");
}

std::string ratio_text(const std::optional<double>& r) { return r ? fmt::format("{:.3g}x", *r) : std::string(); }

// Two runs of one GPU, finding by finding (reconcile.hpp): every finding
// both have with its ratio and verdict, the likely reasons under each one
// outside tolerance, then those only one run has and why.
std::string format_reconciliation(const Reconciliation& rc, const std::string& la, const std::string& lb,
                                  const std::string& identity, const Painter& paint) {
  using Status = ReconciledFinding::Status;
  std::string out = "\n" + paint.bold(fmt::format("Reconciliation of {} and {}", la, lb)) + ": " + identity + "\n";
  size_t only_a = 0;
  for (const auto& o : rc.only) only_a += o.in_a ? 1 : 0;
  out += wrap(fmt::format("{} findings in both: {} within tolerance, {} outside, {} not compared; {} only in {}, "
                          "{} only in {}. Tolerance by unit: sizes and latencies 10%, rates 5%, counts and yes/no "
                          "exactly; ratio {}/{}.",
                          rc.both.size(), rc.count(Status::within), rc.count(Status::outside),
                          rc.count(Status::not_compared), only_a, la, rc.only.size() - only_a, lb, lb, la),
              2);
  size_t label_width = 0, wa = 3, wb = 3;
  for (const auto& r : rc.both) {
    label_width = std::max(label_width, r.a->display.name.size());
    wa = std::max(wa, value_with_interval(*r.a).size());
    wb = std::max(wb, value_with_interval(*r.b).size());
  }
  label_width = std::min<size_t>(label_width, 30);
  wa = std::min<size_t>(wa, 34);
  wb = std::min<size_t>(wb, 34);
  for (const auto& area : area_titles()) {
    std::vector<const ReconciledFinding*> rows;
    for (const auto& r : rc.both)
      if (r.a->display.area == area) rows.push_back(&r);
    if (rows.empty()) continue;
    out += "\n" + paint.bold(area) + "\n";
    out += paint.dim("  " + pad("", label_width) + "  " + pad(la, wa) + "  " + pad(lb, wb) + "  " +
                     pad(lb + "/" + la, 8) + "  verdict") +
           "\n";
    for (const ReconciledFinding* r : rows) {
      const std::string verdict = verdict_text(*r);
      const auto cell = [](const Finding& f, size_t width) {
        const std::string v = value_with_interval(f);
        return v.size() > width ? v.substr(0, width - 3) + "..." : pad(v, width);
      };
      std::string line = "  " + pad(r->a->display.name, label_width) + "  " + cell(*r->a, wa) + "  " +
                         cell(*r->b, wb) + "  " + pad(ratio_text(r->ratio), 8) + "  " +
                         (r->status == Status::outside ? paint.warn(verdict) : verdict);
      out += line + "\n";
      if (r->status == Status::outside)
        for (const auto& reason : r->reasons) out += wrap("- " + reason, 6);
    }
  }
  if (!rc.only.empty()) {
    out += "\n" + paint.bold("In one run only") + "\n";
    for (const auto& o : rc.only)
      out += wrap(fmt::format("{} {} {}: {}", o.in_a ? la : lb, o.finding->display.name, format_value(*o.finding), o.reason),
                  2);
  }
  return out;
}

}  // namespace

std::string format_comparison(const std::vector<ReportRun>& runs, const SummaryStyle& style) {
  const Painter paint(style);
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const DeviceInfo& d = runs[i].results->device;
    out += fmt::format("{} {}\n", paint.bold(fmt::format("[{}] {}", i + 1, runs[i].label)),
                       paint.dim(runs[i].reference ? "published figures" : d.id + " | " + d.api));
  }
  // Which measured runs are one GPU: those pairs are reconciled below.
  std::vector<std::pair<size_t, size_t>> same;
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size(); ++j) {
      if (runs[i].reference || runs[j].reference) continue;
      const Results &a = *runs[i].results, &b = *runs[j].results;
      out += fmt::format("[{}] and [{}]: {}\n", i + 1, j + 1, identity_sentence(a, b));
      if (match_device_identity(a.device, b.device).verdict == DeviceIdentityMatch::Verdict::same)
        same.emplace_back(i, j);
    }
  // Two runs of one GPU: the reconciliation is the comparison.
  if (!(runs.size() == 2 && same.size() == 1)) out += format_plain_comparison(runs, paint);
  for (const auto& [i, j] : same) {
    const std::string la = fmt::format("[{}]", i + 1), lb = fmt::format("[{}]", j + 1);
    out += format_reconciliation(reconcile(*runs[i].results, *runs[j].results, la, lb), la, lb,
                                 identity_sentence(*runs[i].results, *runs[j].results), paint);
  }
  return out;
}

std::string format_summary(const Results& r, const SummaryStyle& style, const Results* reference) {
  const Painter paint(style);
  std::string out = format_header(r, paint);
  // The closed loop's verdict (docs/closed-loop.md), under the header.
  if (r.model.is_object() && r.model.contains("summary") && r.model["summary"].is_string())
    out += printable(r.model["summary"].get<std::string>()) + "\n";
  if (const BlockDiagram d = block_diagram(r); !d.boxes.empty())
    out += "\n" + format_block_diagram_text(d, kWidthColumns);
  const std::string ref_name = reference ? reference->device.id.substr(reference->device.id.find(':') + 1) : "";
  if (reference) out += paint.dim("beside it (dim rows): " + reference->device.name + ", published figures") + "\n";
  LevelTable ref_table;
  if (reference)
    for (const auto& f : reference->findings)
      if (const Finding** slot = table_cell(ref_table, f)) *slot = &f;
  const std::optional<RunIndex> ref_index = reference ? std::optional<RunIndex>(std::in_place, *reference) : std::nullopt;
  const auto ref_of = [&](const Finding& f) { return ref_index ? ref_index->finding(f.id) : nullptr; };
  const RunIndex index(r);

  // The level table takes the per-level capacity, latency and bandwidth;
  // everything else is one line each.
  LevelTable table;
  std::unordered_set<const Finding*> in_table;
  for (const auto& f : r.findings) {
    if (const Finding** slot = table_cell(table, f)) {
      *slot = &f;
      in_table.insert(&f);
    }
  }
  // The graphics block takes the tile, tile memory and fill-rate findings.
  const std::vector<GraphicsLine> graphics = graphics_summary(r);
  std::unordered_set<std::string> graphics_ids;
  for (const auto& line : graphics)
    for (const auto& id : line.finding_ids) {
      in_table.insert(index.finding(id));
      graphics_ids.insert(id);
    }
  const auto is_in_table = [&](const Finding* f) { return in_table.contains(f); };
  const auto in_graphics_block = [&](const Finding* f) { return graphics_ids.contains(f->id); };

  std::vector<std::pair<std::string, std::vector<const Finding*>>> sections;
  for (const auto& area : area_titles()) sections.emplace_back(area, findings_in_area(r.findings, area));

  Widths widths;
  for (const auto& f : r.findings) {
    if (is_in_table(&f)) continue;
    widths.label = std::max(widths.label, f.display.name.size());
    widths.value = std::max(widths.value, value_with_interval(f).size());
    if (const Finding* g = ref_of(f)) widths.value = std::max(widths.value, value_with_interval(*g).size());
  }
  // Long outliers should not push every line past the width.
  widths.label = std::min<size_t>(widths.label, 34);
  widths.value = std::min<size_t>(widths.value, 40);

  bool graphics_shown = false;
  for (const auto& [title, findings] : sections) {
    const bool has_table = title == area_titles().front() && !table.empty();
    if (findings.empty()) continue;
    out += "\n" + paint.bold(title) + "\n";
    if (has_table) out += format_level_table(table, ref_table, ref_name, paint);
    if (!graphics_shown && std::any_of(findings.begin(), findings.end(), in_graphics_block)) {
      out += format_graphics_block(graphics, paint);
      graphics_shown = true;
    }
    for (const Finding* f : findings)
      if (!is_in_table(f)) out += format_finding_line(*f, ref_of(*f), ref_name, widths, paint);
  }
  if (r.findings.empty()) out += "\nNo findings.\n";

  const bool any_low = std::any_of(r.findings.begin(), r.findings.end(), is_low_confidence);
  if (any_low)
    out += "\n" + paint.warn(kLowConfidenceMark) +
           " confidence below 0.5: treat as a guess (method and evidence in results.json)\n";

  if (reference) {
    size_t unmatched = 0;
    for (const auto& f : reference->findings) unmatched += index.finding(f.id) ? 0 : 1;
    if (unmatched > 0)
      out += "\n" + paint.dim(fmt::format("{} more published figures for {} that this run did not measure "
                                           "(all in report.html)",
                                           unmatched, ref_name)) +
             "\n";
  }
  if (const auto missing = unmeasured(r); !missing.empty()) out += format_unmeasured(missing, paint);
  out += driver_section_text(r);
  return out;
}

}  // namespace gpuscope
