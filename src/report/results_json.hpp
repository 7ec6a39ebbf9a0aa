// results.json: the run's outcome as data (schema "gpuscope.results/1", see
// docs/results-format.md). Writing then reading gives back the same Results, bit for bit:
// `gpuscope analyze` recomputes findings from series read here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/device_info.hpp"
#include "core/json_input.hpp"
#include "core/results.hpp"

namespace gpuscope {

nlohmann::json to_json(const Results& r);

// Validates as it reads. Unknown keys are ignored so that files written by a
// newer gpuscope still load; a missing required key or a value of the wrong
// type throws UsageError naming its path, e.g.
// "series[3].points[2].x: expected a number".
// JSON has no NaN or infinity: they are written as null and read back as NaN.
// Values are not range-checked here: analysis sets aside series it cannot
// use (analysis/analyze.hpp).
Results results_from_json(const nlohmann::json& j);

// Throws UsageError with a one-line message naming `path` when the file is
// missing, unreadable, not a regular file, past kResultsLimits (size or
// nesting, core/json_input.hpp), empty, not JSON or not results. Strings
// read are made printable (core/printable.hpp).
Results read_results_file(const std::string& path);

// The same for text already read; `path` only names it in messages.
Results parse_results_text(const std::string& text, const std::string& path);

// The text of results.json for `r`: indented, or compact where indented
// would be past `max_bytes`. Throws UsageError (exit code 2) naming `path`
// where even compact is past it: whatever gpuscope writes, it reads back.
std::string results_file_text(const Results& r, const std::string& path,
                              size_t max_bytes = kResultsLimits.max_bytes);

// Writes results_file_text to a temporary file beside `path`, fsyncs it and
// renames it over `path`, so a run killed half-way leaves the previous
// complete file (or none). Creates the directory if missing. Throws
// UsageError as results_file_text does, std::runtime_error on I/O failure.
void write_results_file_atomic(const Results& r, const std::string& path);

nlohmann::json device_to_json(const DeviceInfo& d);
DeviceInfo device_from_json(const nlohmann::json& j);

}  // namespace gpuscope
