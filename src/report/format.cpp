#include "report/format.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gpuscope {

namespace {

constexpr double kLowConfidence = 0.5;

// From this magnitude on a number is written as "1e+15", not digit by digit:
// no measured quantity needs more than 15 digits, and a results file may hold
// 1e308 (309 digits).
constexpr double kLargestWhole = 1e15;

// A list of more values than this is written as its first kListShown, its
// length and its range: a finding's list is a few sizes or widths; a list of
// 400,000 made a report of 124 MB.
constexpr size_t kListShown = 8;

bool is_integral(double v) { return std::isfinite(v) && v == std::floor(v) && std::abs(v) < kLargestWhole; }

// Unitless values: counts exact ("32"), ratios as short as they are exact
// ("0.03125" is fp64 at 1/32 rate), else three figures ("0.499").
std::string format_count(double v) {
  if (is_integral(v)) return fmt::format("{:.0f}", v);
  const std::string shortest = fmt::format("{}", v);
  return shortest.size() <= 8 ? shortest : format_significant(v);
}

// Whole numbers stay whole ("4 cycles", "1710 MHz"); see format_bytes for "B".
std::string format_quantity(double v, const std::string& unit) {
  if (unit == "B") return format_bytes(v);
  if (unit.empty()) return format_count(v);
  const std::string number = is_integral(v) ? fmt::format("{:.0f}", v) : format_significant(v);
  return number + " " + unit;
}

}  // namespace

// Measurements are not more precise than three figures, and "18.4 ns" reads
// faster than "18.4172 ns".
std::string format_significant(double v) {
  const double a = std::abs(v);
  if (a >= kLargestWhole) return fmt::format("{:.3g}", v);
  if (a >= 100 || !std::isfinite(v)) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  if (a == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string format_interval(const Finding& f) {
  if (!f.low && !f.high) return "";
  const auto bound = [&](const std::optional<double>& b) {
    return b ? format_quantity(*b, f.unit) : std::string("?");
  };
  return fmt::format("[{} .. {}]", bound(f.low), bound(f.high));
}

std::string value_with_interval(const Finding& f) {
  const std::string interval = format_interval(f);
  return interval.empty() ? format_value(f) : format_value(f) + " " + interval;
}

bool is_low_confidence(const Finding& f) { return f.confidence < kLowConfidence; }

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  double v = bytes;
  while (std::abs(v) >= 1024 && unit + 1 < kUnits.size()) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", v);
  // Below GiB, sizes exact in their unit (cache sizes nearly always are) read
  // best bare: "48 KiB". Others, and memory totals from GiB up, get three
  // significant figures: "25.5 MiB", "1.00 GiB".
  if (unit < 3 && v == std::floor(v)) return fmt::format("{:.0f} {}", v, kUnits[unit]);
  return format_significant(v) + " " + kUnits[unit];
}

std::string format_value(const Finding& f) {
  if (const auto* b = std::get_if<bool>(&f.value)) return *b ? "yes" : "no";
  if (const auto* name = std::get_if<std::string>(&f.value)) return *name;
  if (const auto* list = std::get_if<std::vector<double>>(&f.value)) {
    if (list->empty()) return "none";
    std::string s;
    for (size_t i = 0; i < std::min(list->size(), kListShown); ++i)
      s += (s.empty() ? "" : ", ") + format_quantity((*list)[i], f.unit);
    if (list->size() > kListShown) {
      const auto [lo, hi] = std::minmax_element(list->begin(), list->end());
      s += fmt::format(", ... ({} values, {} to {})", list->size(), format_quantity(*lo, f.unit),
                       format_quantity(*hi, f.unit));
    }
    return s;
  }
  return format_quantity(std::get<double>(f.value), f.unit);
}

std::vector<const Finding*> findings_in_area(const std::vector<Finding>& all, const std::string& area) {
  std::vector<const Finding*> out;
  for (const auto& f : all)
    if (f.display.area == area) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding* a, const Finding* b) { return a->display.order < b->display.order; });
  return out;
}

}  // namespace gpuscope
