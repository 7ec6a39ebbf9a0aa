// The summary printed after a run or an analysis: a compact spec sheet of the
// findings, under ~100 columns, memory hierarchy first.
#pragma once

#include <string>

#include "core/finding.hpp"
#include "core/results.hpp"

namespace gpuscope {

struct SummaryStyle {
  bool color = false;  // ANSI colours; the caller decides (isatty, NO_COLOR)
};

std::string format_summary(const Results& r, const SummaryStyle& style = {});

// Binary units: "512 B", "48 KiB", "2 MiB", "25.5 MiB", "1.00 GiB".
std::string format_bytes(double bytes);

// The value as a person reads it, chosen by unit: "B" -> format_bytes,
// "ns" -> "18.4 ns", counts plain ("32"), booleans "yes"/"no",
// lists "32, 64, 128".
std::string format_value(const Finding& f);

}  // namespace gpuscope
