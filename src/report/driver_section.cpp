#include "report/driver_section.hpp"

#include "analysis/driver_agreement.hpp"
#include "report/html_builder.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpuscope {
namespace {

std::string md(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|' || c == '\\' || c == '`' || c == '*' || c == '_' || c == '<' || c == '>') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

}  // namespace

std::string format_driver_value(const DriverFact& f) {
  std::string v;
  if (f.value.is_string()) {
    v = f.value.get<std::string>();
  } else {
    const double x = f.value.get<double>();
    v = x == std::floor(x) && std::abs(x) < 1e18 ? fmt::format("{:.0f}", x) : fmt::format("{:.6g}", x);
  }
  return f.unit.empty() ? v : v + " " + f.unit;
}

html::Markup driver_section_html(const Results& r) {
  using html::Markup;
  if (r.device.driver.empty()) return Markup();
  Markup out = "<h2 id=\"driver\">What the driver says</h2>\n";
  const auto checks = analysis::check_driver_facts(r);
  if (!checks.empty()) {
    out +=
        "<table class=\"driver-checks\">\n<tr><th></th><th>measured or the API's</th><th>the driver's</th>"
        "<th></th></tr>\n";
    for (const auto& c : checks)
      out += html::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          c.agrees ? "agrees" : "disagrees", c.what, c.measured, c.claimed,
                          c.agrees ? Markup("agrees") : "<strong>disagrees</strong>: " + html::text(c.note));
    out += "</table>\n";
  }
  out +=
      "<table class=\"driver-facts\">\n<tr><th>when</th><th>driver</th><th>fact</th><th>value</th>"
      "<th>source</th></tr>\n";
  for (const auto& s : r.device.driver) {
    for (const auto& f : s.facts)
      out += html::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"dim\">{}</td></tr>\n",
                          s.when, s.driver, f.key, format_driver_value(f), f.source);
    for (const auto& n : s.notes)
      out += html::format("<tr><td>{}</td><td>{}</td><td colspan=\"3\" class=\"dim\">{}</td></tr>\n", s.when,
                          s.driver, n);
  }
  return out + "</table>\n";
}

std::string driver_section_markdown(const Results& r) {
  if (r.device.driver.empty()) return "";
  std::string out = "### What the driver says\n\n";
  const auto checks = analysis::check_driver_facts(r);
  if (!checks.empty()) {
    out += "| | measured or the API's | the driver's | |\n|---|---|---|---|\n";
    for (const auto& c : checks)
      out += fmt::format("| {} | {} | {} | {} |\n", md(c.what), md(c.measured), md(c.claimed),
                         c.agrees ? "agrees" : "**disagrees**: " + md(c.note));
    out += "\n";
  }
  out += "| when | driver | fact | value | source |\n|---|---|---|---|---|\n";
  for (const auto& s : r.device.driver) {
    for (const auto& f : s.facts)
      out += fmt::format("| {} | {} | {} | {} | {} |\n", md(s.when), md(s.driver), md(f.key),
                         md(format_driver_value(f)), md(f.source));
    for (const auto& n : s.notes)
      out += fmt::format("| {} | {} | note | {} | |\n", md(s.when), md(s.driver), md(n));
  }
  return out + "\n";
}

std::string driver_section_text(const Results& r) {
  if (r.device.driver.empty()) return "";
  std::string out = "\nWhat the driver says\n";
  // The start snapshot, less the PCI identity (in results.json and the reports).
  for (const auto& s : r.device.driver) {
    if (s.when != "start") continue;
    for (const auto& f : s.facts)
      if (!f.key.starts_with("pci."))
        out += fmt::format("  {:<26} {}  [{}]\n", f.key, format_driver_value(f), s.driver);
    for (const auto& n : s.notes) out += fmt::format("  note: {}\n", n);
  }
  for (const auto& c : analysis::check_driver_facts(r)) {
    if (c.agrees) {
      out += fmt::format("  {} agrees: {} | driver: {}\n", c.what, c.measured, c.claimed);
    } else {
      out += fmt::format("  {} DISAGREES: {} | driver: {}\n    {}\n", c.what, c.measured, c.claimed, c.note);
    }
  }
  return out;
}

}  // namespace gpuscope
