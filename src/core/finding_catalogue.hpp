// Every finding id the results contract defines (docs/results-format.md,
// "Finding ids"), with how reports show it: a display name, the report area
// it belongs to and, for the memory levels' table, its row and column. The
// catalogue is the one place that knows the ids' structure; reports read a
// finding's `display`, never its id.
#pragma once

#include <string>
#include <vector>

#include "core/finding.hpp"

namespace gpuscope {

// How `id` is shown. An id the catalogue lacks is named by itself, in the
// area "Other", with known == false.
FindingDisplay describe_finding(const std::string& id);

// Fills every finding's `display` (analysis, results.json readers and
// reference profiles call this on what they produce).
void describe_findings(std::vector<Finding>& findings);

// Every area title in the order reports list them, "Other" last.
const std::vector<std::string>& area_titles();

// The id patterns of the catalogue ("memory.<level>.capacity_bytes"), in
// order, for the test that holds it and the contract document together.
std::vector<std::string> catalogue_patterns();

}  // namespace gpuscope
