// Text from outside gpuscope (driver strings, results files, sim
// descriptions) made safe to print: a terminal must not run escape sequences
// a device name carries, no output may show text in another order than it
// is stored, and a report must not hold bytes no reader can show. Every
// string read from outside passes here once, where it is read; the reports
// print what results from it.
#pragma once

#include "core/device_info.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpuscope {

// `text` with every control character but newline and tab (C0, DEL, C1),
// every bidirectional control (U+202A..U+202E, U+2066..U+2069, U+200E,
// U+200F, U+061C) and the line and paragraph separators (U+2028, U+2029)
// written as a visible escape ("\x1b", "\u009b", "\u202e"), and every byte
// that is not part of well-formed UTF-8 as "\xNN". Printable text passes
// unchanged.
std::string printable(std::string_view text);

// Offset of the first byte of `text` that is not part of well-formed UTF-8
// (RFC 3629), or std::string_view::npos when there is none.
size_t first_invalid_utf8(std::string_view text);

// True when printable(text) == text.
bool is_printable(std::string_view text);

// A copy of `j` with printable() applied to every string and object key.
// Nesting is bounded by whoever parsed `j` (see core/json_input.hpp).
nlohmann::json printable_json(const nlohmann::json& j);

// `d` with printable() applied to every string it holds: what a driver
// says about itself is printed as it is.
DeviceInfo printable(DeviceInfo d);

}  // namespace gpuscope
