// The recorded sysfs trees of tests/data/sysfs and looking driver facts up.
#pragma once

#include "core/driver_facts.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

namespace gpuscope::test {

// One directory per driver, laid out as the driver writes it.
inline const std::filesystem::path kSysfsTrees = std::filesystem::path(GPUSCOPE_TEST_DATA) / "sysfs";

// Fact `key` of snapshot `s`; throws when the snapshot lacks it.
inline const DriverFact& fact(const DriverSnapshot& s, const std::string& key) {
  const DriverFact* f = s.find(key);
  if (!f) throw std::runtime_error("no fact " + key + " from " + s.driver);
  return *f;
}

inline double num(const DriverSnapshot& s, const std::string& key) { return fact(s, key).value.get<double>(); }
inline std::string str(const DriverSnapshot& s, const std::string& key) {
  return fact(s, key).value.get<std::string>();
}

}  // namespace gpuscope::test
