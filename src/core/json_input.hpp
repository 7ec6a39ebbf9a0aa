// Bounded reading of JSON that comes from outside gpuscope (results.json,
// sim descriptions): only regular files, at most a stated number of bytes,
// nesting at most a stated depth, so that no input makes a reader hang,
// exhaust memory, or a writer recurse without bound. Errors are UsageError
// (exit code 2) and say what is wrong and where.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuscope {

struct JsonLimits {
  size_t max_bytes;  // of the whole file
  size_t max_depth;  // arrays and objects inside each other, the outermost counted
};

// Every file is read whole into memory; 64 MiB is over 100 times the largest
// real results file (an H200's whole default run: 0.6 MB), and 32 levels
// over 5 times the deepest (6).
inline constexpr JsonLimits kResultsLimits = {size_t{64} << 20, 32};
// A preset is about 12 KB and 5 levels deep.
inline constexpr JsonLimits kSimDescriptionLimits = {size_t{4} << 20, 32};

// The bytes of the regular file at `path`, which a message calls
// "<what> '<path>'". Throws UsageError when it cannot be opened, is a
// directory, FIFO, socket or device, or holds more than `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes);

// Parses `text` (RFC 8259 JSON, UTF-8). Throws UsageError whose message
// names the line and column and, where it helps, the JSON path: text that
// ends early says "truncated", a byte that is not UTF-8 says so, a number
// too large for a double names its field, nesting past `max_depth` names
// where it happened.
nlohmann::json parse_json_input(std::string_view text, size_t max_depth);

// `parent.key`, or `parent["key"]` when the key is not a plain name (empty,
// or holding a dot, quote, space or control character), so that a path in
// a message always reads back unambiguously.
std::string json_key_path(const std::string& parent, std::string_view key);

}  // namespace gpuscope
