// How every report writes a finding's value: the numbers, units and
// intervals the terminal summary, report.md and report.html share, and the
// order they list findings in. A printer takes a finding's name and area
// from its `display` (core/finding_catalogue.hpp), never from its id.
#pragma once

#include <string>
#include <vector>

#include "core/finding.hpp"

namespace gpuscope {

// "[45 KiB .. 53 KiB]", or "" when the finding has no interval.
std::string format_interval(const Finding& f);
// format_value and the interval after it.
std::string value_with_interval(const Finding& f);
// Below 0.5: a guess, marked "?" in every report.
bool is_low_confidence(const Finding& f);

// Binary units: "512 B", "48 KiB", "2 MiB", "25.5 MiB", "1.00 GiB".
std::string format_bytes(double bytes);

// The value as a person reads it, chosen by unit: "B" -> format_bytes,
// "ns" -> "18.4 ns", counts plain ("32"), booleans "yes"/"no",
// lists "32, 64, 128"; a list of more than 8 values as its first 8, its
// length and its range: "1, 2, ..., 8, ... (100 values, 1 to 100)".
std::string format_value(const Finding& f);

// Three significant figures, never scientific notation from 1 to 1e15;
// from 1e15 on, "1e+308" (never hundreds of digits).
std::string format_significant(double v);

// The findings of `area` in report order: by their rank within the area
// (FindingDisplay::order), then as the analysis emitted them.
std::vector<const Finding*> findings_in_area(const std::vector<Finding>& all, const std::string& area);

}  // namespace gpuscope
