// The summary printed after a run or an analysis: a compact spec sheet of the
// findings, under ~100 columns, memory hierarchy first.
#pragma once

#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/results.hpp"
#include "report/report_run.hpp"

namespace gpuscope {

struct SummaryStyle {
  bool color = false;  // ANSI colours; the caller decides (isatty, NO_COLOR)
};

// `reference` (optional, e.g. reference_as_results of a known device): its
// value for each finding the run has is printed beneath, dim, named after it.
std::string format_summary(const Results& r, const SummaryStyle& style = {}, const Results* reference = nullptr);

// `gpuscope compare`: the runs' findings side by side by area, each with its
// interval, and every run's ratio to the first ("[2]/[1]").
std::string format_comparison(const std::vector<ReportRun>& runs, const SummaryStyle& style = {});

// The area a finding id belongs to, by prefix: "Memory hierarchy" (memory.*),
// "Local memory and texture" (local.*, texture.*), "Compute", "Execution",
// "Host and system" (host.*, launch.*, sched.*, atomics.*), "Device", else "Other".
std::string area_title(const std::string& finding_id);
// Every area title in the order reports list them, "Other" last.
std::vector<std::string> area_titles();

// A readable label: "memory.tlb.miss_penalty_ns" -> "tlb miss penalty".
std::string label_for(const std::string& finding_id);

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
// lists "32, 64, 128".
std::string format_value(const Finding& f);

}  // namespace gpuscope
