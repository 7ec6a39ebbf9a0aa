#include "report/matrix_numerics_table.hpp"

#include <fmt/format.h>

#include <vector>

#include "report/format.hpp"
#include "report/markdown_report.hpp"

namespace gpuscope {
namespace {

constexpr std::string_view kPrefix = "compute.matrix.";
constexpr std::string_view kSuffix = ".numerics.matches_model";

// A property's value as a table shows it; "" where the finding is absent.
std::string text(const Results& r, const std::string& id) {
  const Finding* f = find_finding(r.findings, id);
  if (!f) return "";
  std::string s;
  if (const auto* d = std::get_if<double>(&f->value))
    s = fmt::format("{:g}", *d);
  else if (const auto* b = std::get_if<bool>(&f->value))
    s = *b ? "kept" : "flushed";
  else if (const auto* w = std::get_if<std::string>(&f->value))
    s = *w;
  return is_low_confidence(*f) ? s + " ?" : s;
}

// "a, b" of the parts present; "-" where none is.
std::string joined(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : sep) + p;
  return out.empty() ? "-" : out;
}

// "kept / flushed", each side "-" where unread; "-" where neither is read
// (integer types).
std::string subnormals(const std::string& in, const std::string& out) {
  if (in.empty() && out.empty()) return "-";
  return (in.empty() ? "-" : in) + " / " + (out.empty() ? "-" : out);
}

// One shape's row: its cells in kHeaders' order, whether it matched a
// model, and the plain-words lines shown under the table.
struct Row {
  std::vector<std::string> cells;
  std::vector<std::string> meaning;
};

const char* const kHeaders[] = {"shape", "throughput",      "matches a model",     "products", "internal sum",
                                "block", "result rounding", "subnormals in / out", "overflow"};

std::vector<Row> rows(const Results& r) {
  std::vector<Row> out;
  for (const Finding& match : r.findings) {
    if (!match.id.starts_with(kPrefix) || !match.id.ends_with(kSuffix)) continue;
    const std::string shape =
        match.id.substr(kPrefix.size(), match.id.size() - kPrefix.size() - kSuffix.size());
    const std::string base = std::string(kPrefix) + shape;
    const std::string n = base + ".numerics.";
    const Finding* tp = find_finding(r.findings, base + ".throughput_gops");
    const bool matches = std::get_if<bool>(&match.value) && std::get<bool>(match.value);
    std::string bits = text(r, n + "sum_bits");
    if (!bits.empty() && bits != "exact") bits += " bits";
    const std::string aligned = text(r, n + "alignment");
    Row row;
    row.cells = {shape,
                 tp ? fmt::format("{} Gop/s", format_significant(number(*tp))) : "-",
                 matches ? "yes" : "no",
                 joined({text(r, n + "products")}),
                 joined({bits, text(r, n + "sum_rounding"), aligned.empty() ? "" : "aligned " + aligned}),
                 joined({text(r, n + "block"), text(r, n + "order")}, " "),
                 joined({text(r, n + "result_rounding")}),
                 subnormals(text(r, n + "subnormal_inputs"), text(r, n + "subnormal_outputs")),
                 joined({text(r, n + "overflow"), text(r, n + "integer_overflow")})};
    // Notes without their quoted patterns.
    const auto say = [&](const std::string& note) {
      row.meaning.push_back(note.substr(0, note.find("; pattern")));
    };
    if (!matches) say(match.note);
    if (const Finding* sum = find_finding(r.findings, n + "sum_bits");
        sum && std::get_if<double>(&sum->value))
      say(sum->note);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::string matrix_numerics_markdown(const Results& r) {
  const std::vector<Row> all = rows(r);
  if (all.empty()) return "";
  std::string out = "What the matrix engine computes (matrix probe, numerics):\n\n|";
  std::string rule = "|";
  for (const char* h : kHeaders) {
    out += fmt::format(" {} |", h);
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  std::string meaning;
  for (const Row& row : all) {
    out += "|";
    for (const auto& c : row.cells) out += " " + markdown_cell(c) + " |";
    out += "\n";
    for (const auto& m : row.meaning)
      meaning += "- " + markdown_cell(row.cells[0]) + ": " + markdown_cell(m) + "\n";
  }
  return out + "\n" + (meaning.empty() ? "" : meaning + "\n");
}

html::Markup matrix_numerics_html(const Results& r) {
  const std::vector<Row> all = rows(r);
  if (all.empty()) return {};
  html::Markup out = "<h2 id=\"matrix-numerics\">What the matrix engine computes</h2>\n<table>\n<tr>";
  for (const char* h : kHeaders) out += html::format("<th>{}</th>", h);
  out += "</tr>\n";
  html::Markup meaning;
  for (const Row& row : all) {
    out += "<tr>";
    for (const auto& c : row.cells) out += html::format("<td>{}</td>", c);
    out += "</tr>\n";
    for (const auto& m : row.meaning) meaning += html::format("<li>{}: {}</li>\n", row.cells[0], m);
  }
  out += "</table>\n";
  if (!meaning.empty()) out += "<ul>\n" + meaning + "</ul>\n";
  return out;
}

}  // namespace gpuscope
