// What the driver claims beside what gpuscope measured: core counts and
// clocks, with whether they agree. Pure: reads a Results, touches no device.
#pragma once

#include "core/results.hpp"

#include <string>
#include <vector>

namespace gpuscope::analysis {

struct DriverCheck {
  std::string what;      // "shader cores", "clock", "model"
  std::string measured;  // the measured (or API-reported) side, with its finding id or field
  std::string claimed;   // the driver's side, with the driver and source
  bool agrees = true;
  std::string note;  // why they differ, where they do; empty when they agree
};

// Relative tolerance within which a measured clock agrees with the driver's.
inline constexpr double kClockTolerance = 0.10;

// Every check the stored driver snapshots allow; empty when none were read.
std::vector<DriverCheck> check_driver_facts(const Results& r);

}  // namespace gpuscope::analysis
