// Looking findings up by id, for the tests' assertions.
#pragma once

#include "core/finding.hpp"
#include "core/results.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuscope::test {

inline const Finding* find_finding(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

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
