// Structure-aware mutations for the JSON fuzz targets (LLVMFuzzerCustomMutator).
//
// Byte flips rarely get a results file or a sim description past the JSON
// reader and into the code behind it (the analysis, the reporters, the sim's
// validation). Here an input that parses is mutated as a document: one node,
// picked at random, changes its type, its size or its text, and the
// document is written back. Strings gain what has broken reports before:
// markup that would run in a page, bidirectional overrides and line
// separators that deceive a reader, escapes of C0 controls and NUL. An
// input that does not parse (and one in kByteMutationOneIn) gets libFuzzer's
// own byte mutations, so that the reader's syntax errors stay covered.
//
// Deterministic in `seed`, as libFuzzer requires of a custom mutator.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace gpuscope::fuzz {

// One mutation in this many is libFuzzer's byte-level one, even of a
// document that parses: syntax errors in the middle of a valid file.
inline constexpr unsigned kByteMutationOneIn = 4;
// A document nested deeper than this is not descended into when a node is
// picked (the readers refuse past 32 levels anyway).
inline constexpr int kMaxPickDepth = 40;
// Elements an array may be grown by in one mutation: enough to cross the
// analysis' bounds (4096 points) in a few steps, not enough to leave max_size.
inline constexpr size_t kMaxGrowth = 512;

// Strings that have broken, or could break, a reader or a report.
inline const std::vector<std::string>& hostile_strings() {
  static const std::vector<std::string> s = {
      "<img src=x onerror=alert(1)>",
      "</script><script>alert(1)</script>",
      "\"><svg onload=alert(1)>",
      "</style><b>",
      "<!--",
      "]]>",
      "&amp;&lt;&#x3c;",
      "javascript:alert(1)",
      "\xe2\x80\xae" "evil" "\xe2\x80\xac",  // U+202E right-to-left override ... U+202C
      "\xe2\x81\xa6" "x" "\xe2\x81\xa9",      // U+2066 left-to-right isolate ... U+2069
      "line\xe2\x80\xa8" "separator",         // U+2028
      "para\xe2\x80\xa9" "separator",         // U+2029
      std::string("nul\0byte", 8),
      "\x1b[31mred\x1b[0m",
      "\xc2\x9b" "31m",  // U+009B, the C1 control sequence introducer
      "\r\n\t\b\f",
      "|pipe|table|",
      "*emph* `code` [link](javascript:x)",
      "{{template}} ${expr}",
      "%s%n%x",
      "",
      std::string(4096, 'A'),
      "\xef\xbb\xbf",  // a byte order mark
      "\xf0\x9f\x98\x80",  // an emoji beyond the BMP
  };
  return s;
}

// Numbers at the edges of what readers and printers handle.
inline const std::vector<nlohmann::json>& edge_numbers() {
  static const std::vector<nlohmann::json> n = {
      0,       -0.0,    1,        -1,       1e308,    -1e308,     1e-320,   4.9e-324, 1e15, 1e15 + 1,
      1e16,    2147483648LL, 4294967296LL, -9223372036854775807LL - 1, 18446744073709551615ULL, 0.5, 1e-9, 255, 65536,
  };
  return n;
}

class JsonMutator {
 public:
  explicit JsonMutator(unsigned seed) : rng_(seed) {}

  // Mutates the document in place.
  void mutate(nlohmann::json& doc) {
    std::vector<nlohmann::json*> nodes;
    collect(doc, 0, nodes);
    nlohmann::json& n = *nodes[pick(nodes.size())];
    switch (pick(6)) {
      case 0: change_type(n); break;
      case 1: resize(n); break;
      case 2: mutate_string(n); break;
      case 3: n = edge_numbers()[pick(edge_numbers().size())]; break;
      case 4: copy_from(n, nodes); break;
      default: mutate_keys(n); break;
    }
  }

 private:
  size_t pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  static void collect(nlohmann::json& j, int depth, std::vector<nlohmann::json*>& out) {
    out.push_back(&j);
    if (depth >= kMaxPickDepth || !j.is_structured()) return;
    for (auto& child : j) collect(child, depth + 1, out);
  }

  void change_type(nlohmann::json& n) {
    const std::string text = n.is_string() ? n.get<std::string>() : n.dump();
    switch (pick(7)) {
      case 0: n = nullptr; break;
      case 1: n = pick(2) == 1; break;
      case 2: n = text; break;  // a number or object as its text
      case 3: n = nlohmann::json::array({n}); break;
      case 4: n = nlohmann::json{{"value", n}}; break;
      case 5: n = static_cast<double>(text.size()); break;
      default: n = nlohmann::json::object(); break;
    }
  }

  void resize(nlohmann::json& n) {
    if (n.is_array() && !n.empty()) {
      if (pick(2) == 0) {
        n.erase(n.begin() + static_cast<std::ptrdiff_t>(pick(n.size())));
      } else {
        const nlohmann::json copy = n[pick(n.size())];
        const size_t times = 1 + pick(pick(4) == 0 ? kMaxGrowth : 4);
        for (size_t i = 0; i < times; ++i) n.push_back(copy);
      }
    } else if (n.is_object() && !n.empty()) {
      auto it = n.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(n.size())));
      n.erase(it);
    } else if (n.is_string()) {
      std::string s = n.get<std::string>();
      n = pick(2) == 0 ? s.substr(0, pick(s.size() + 1)) : s + s;
    } else {
      n = nlohmann::json::array();
    }
  }

  void mutate_string(nlohmann::json& n) {
    const std::string& h = hostile_strings()[pick(hostile_strings().size())];
    if (!n.is_string()) {
      n = h;
      return;
    }
    std::string s = n.get<std::string>();
    s.insert(pick(s.size() + 1), h);
    n = s;
  }

  void copy_from(nlohmann::json& n, const std::vector<nlohmann::json*>& nodes) {
    const nlohmann::json* from = nodes[pick(nodes.size())];
    // A node copied into itself, or into one of its descendants, is copied first.
    n = nlohmann::json(*from);
  }

  void mutate_keys(nlohmann::json& n) {
    if (!n.is_object()) {
      mutate_string(n);
      return;
    }
    if (n.empty() || pick(3) == 0) {
      n[hostile_strings()[pick(hostile_strings().size())]] = edge_numbers()[pick(edge_numbers().size())];
      return;
    }
    auto it = n.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(n.size())));
    nlohmann::json value = it.value();
    const std::string key = it.key() + hostile_strings()[pick(hostile_strings().size())];
    n.erase(it);
    n[key] = std::move(value);
  }

  std::mt19937 rng_;
};

// The deepest nesting of brackets and braces in `text`, strings skipped:
// nlohmann's dump recurses once per level, so a document deeper than
// kMaxPickDepth is left to the byte mutations.
inline int nesting_depth(const uint8_t* text, size_t size) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(text[i]);
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// The body of LLVMFuzzerCustomMutator for a target whose input is JSON.
inline size_t mutate_json(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937 coin(seed);
  if (coin() % kByteMutationOneIn == 0 || nesting_depth(data, size) > kMaxPickDepth)
    return LLVMFuzzerMutate(data, size, max_size);
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
  JsonMutator(static_cast<unsigned>(coin())).mutate(doc);
  const std::string out = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace gpuscope::fuzz
