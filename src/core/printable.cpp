#include "core/printable.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace gpuscope {

namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (RFC 3629:
// no overlong forms, no surrogates, nothing past U+10FFFF), 0 if there is none.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const auto continuation = [&](size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  const uint8_t b = byte(i);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    const uint8_t b1 = byte(i + 1);
    if (b == 0xE0 && b1 < 0xA0) return 0;   // overlong
    if (b == 0xED && b1 >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    const uint8_t b1 = byte(i + 1);
    if (b == 0xF0 && b1 < 0x90) return 0;   // overlong
    if (b == 0xF4 && b1 >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

bool is_c0_control(uint8_t b) { return (b < 0x20 && b != '\n' && b != '\t') || b == 0x7F; }

// C1 controls U+0080..U+009F are encoded 0xC2 0x80..0x9F; a terminal may
// take U+009B as the start of an escape sequence.
bool is_c1_control(std::string_view text, size_t i) {
  return static_cast<uint8_t>(text[i]) == 0xC2 && static_cast<uint8_t>(text[i + 1]) <= 0x9F;
}

// Characters that make text show in another order than it is stored or break
// a line where the reader sees no newline, so that what a terminal, a
// Markdown viewer or a browser shows is not what the bytes say: the
// bidirectional embeddings and overrides U+202A..U+202E, the isolates
// U+2066..U+2069, the marks U+200E, U+200F and U+061C, and the line and
// paragraph separators U+2028 and U+2029. Each is 2 or 3 bytes of UTF-8;
// returns its code point, or 0 for any other sequence.
uint32_t deceiving_code_point(std::string_view text, size_t i, size_t n) {
  const auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(text[i + k])); };
  if (n == 2 && byte(0) == 0xD8 && byte(1) == 0x9C) return 0x061C;
  if (n != 3 || byte(0) != 0xE2) return 0;
  const uint32_t cp = ((byte(1) & 0x3F) << 6 | (byte(2) & 0x3F)) + 0x2000;
  const bool deceiving = cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
                         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
  return deceiving ? cp : 0;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    const size_t n = utf8_length(text, i);
    if (n == 0 || (n == 1 && is_c0_control(b))) {
      out += fmt::format("\\x{:02x}", b);
      ++i;
    } else if (n == 2 && is_c1_control(text, i)) {
      out += fmt::format("\\u{:04x}", static_cast<uint8_t>(text[i + 1]));
      i += 2;
    } else if (const uint32_t cp = deceiving_code_point(text, i, n)) {
      out += fmt::format("\\u{:04x}", cp);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

size_t first_invalid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

bool is_printable(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0 || (n == 1 && is_c0_control(static_cast<uint8_t>(text[i]))) ||
        (n == 2 && is_c1_control(text, i)) || deceiving_code_point(text, i, n))
      return false;
    i += n;
  }
  return true;
}

nlohmann::json printable_json(const nlohmann::json& j) {
  if (j.is_string()) return printable(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(printable_json(v));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) out[printable(k)] = printable_json(v);
    return out;
  }
  return j;
}

DeviceInfo printable(DeviceInfo d) {
  for (std::string* s : {&d.id, &d.name, &d.vendor, &d.type, &d.api, &d.driver_version, &d.platform})
    *s = printable(*s);
  for (std::string& e : d.extensions) e = printable(e);
  d.vendor_info = printable_json(d.vendor_info);
  for (DriverSnapshot& snap : d.driver) {
    for (std::string* s : {&snap.when, &snap.driver}) *s = printable(*s);
    for (std::string& n : snap.notes) n = printable(n);
    for (DriverFact& f : snap.facts) {
      for (std::string* s : {&f.key, &f.unit, &f.source}) *s = printable(*s);
      f.value = printable_json(f.value);
    }
  }
  return d;
}

}  // namespace gpuscope
