// Building findings for the reports' tests, and looking findings up by id
// for the tests' assertions.
#pragma once

#include "core/finding.hpp"
#include "core/finding_catalogue.hpp"
#include "core/results.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::test {

// A finding as analysis writes one, with the catalogue's display names for
// `id`; `low`/`high` bound the interval in `unit`, `evidence` names series.
inline Finding make_finding(std::string id, FindingValue value, std::string unit, double confidence,
                            std::optional<double> low = {}, std::optional<double> high = {},
                            std::vector<std::string> evidence = {}, std::string note = "",
                            std::string method = "synthetic") {
  Finding f;
  f.id = std::move(id);
  f.value = std::move(value);
  f.unit = std::move(unit);
  f.confidence = confidence;
  f.low = low;
  f.high = high;
  f.evidence = std::move(evidence);
  f.method = std::move(method);
  f.note = std::move(note);
  f.display = describe_finding(f.id);
  return f;
}

using gpuscope::find_finding;  // core/finding.hpp

// The numeric value of finding `id`; a test failure and -1 when it is absent.
inline double finding_value(const std::vector<Finding>& fs, const std::string& id) {
  const Finding* f = find_finding(fs, id);
  if (f == nullptr) ADD_FAILURE() << "no finding " << id;
  return f ? number(*f) : -1;
}

inline double finding_value(const Results& r, const std::string& id) { return finding_value(r.findings, id); }

// The list a list-valued finding holds; throws std::bad_variant_access otherwise.
inline std::vector<double> finding_list(const Finding& f) { return std::get<std::vector<double>>(f.value); }

}  // namespace gpuscope::test
