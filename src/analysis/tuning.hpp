// A threshold a reader decides by, with the two readings it separates and
// what set it. Each reader keeps its thresholds in one tuning table
// (src/analysis/<reader>_tuning.hpp): the code reads a threshold by its
// constant's name, docs/inference.md lists every table, and
// tests/unit/analysis_tuning_test.cpp holds the two to each other.
#pragma once

#include <span>
#include <string_view>

namespace gpuscope::analysis {

struct Threshold {
  std::string_view name;       // the constant's name, as docs/inference.md cites it
  double value;                // in `unit`
  std::string_view unit;       // "x" for a ratio, "σ" for noise sigmas, "octaves", "points", "confidence", ...
  std::string_view separates;  // the readings it tells apart: "A vs B"
  std::string_view evidence;   // what set it: a recorded file, a drawn seed, a published figure or an argument
  constexpr operator double() const { return value; }
};

// One reader's table: its name as docs/inference.md heads it, and its rows.
struct TuningTable {
  std::string_view reader;
  std::span<const Threshold* const> rows;
};

// Every reader's table, for the docs test.
std::span<const TuningTable> tuning_tables();

}  // namespace gpuscope::analysis
