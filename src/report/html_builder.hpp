// The one path from text to the HTML and SVG that gpuscope writes. Markup is
// built only from string literals in gpuscope's source, from text that
// html::text escapes, from html::format (which escapes every string it is
// given and passes only Markup through) and from other Markup. A string from
// a results file, a driver or a reference cannot become Markup without
// escaping: `markup + some_std_string` does not compile. So a new table
// cannot forget to escape.
//
// Attribute values are escaped alike (& < > " '), which keeps them inside
// their quotes: every attribute in a literal is written quoted.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace gpuscope::html {

// Text for HTML and SVG element content and quoted attribute values: & < > " '
// written as entities. Nothing else changes: what is not printable was made
// so where it was read (core/printable.hpp).
inline std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

class Markup {
 public:
  Markup() = default;
  // A literal in gpuscope's source is markup as it stands.
  template <size_t N>
  Markup(const char (&literal)[N]) : s_(literal, N - 1) {}  // NOLINT: implicit on purpose

  // Text that gpuscope itself made safe for its place and that no escaping
  // would leave intact: an inlined asset checked not to close its element,
  // JSON with < > & written as \u escapes, a PNG data URI. Every call is a
  // claim a reviewer checks; data never goes through it.
  static Markup trusted(std::string s) {
    Markup m;
    m.s_ = std::move(s);
    return m;
  }

  const std::string& str() const { return s_; }
  operator const std::string&() const { return s_; }  // NOLINT: the safe direction
  bool empty() const { return s_.empty(); }

  Markup& operator+=(const Markup& m) {
    s_ += m.s_;
    return *this;
  }
  friend Markup operator+(Markup a, const Markup& b) { return a += b; }
  template <size_t N>
  friend Markup operator+(const char (&literal)[N], const Markup& b) {
    return Markup(literal) += b;
  }
  friend bool operator==(const Markup& a, const Markup& b) { return a.s_ == b.s_; }

 private:
  std::string s_;
};

// A text node (or an attribute value): `s` escaped.
inline Markup text(std::string_view s) { return Markup::trusted(escape(s)); }

namespace detail {

// How html::format passes each argument to fmt: Markup as it is, strings
// escaped, numbers and booleans unchanged (their text holds no markup).
inline std::string_view arg(const Markup& m) { return m.str(); }
inline std::string arg(std::string_view s) { return escape(s); }
inline std::string arg(const std::string& s) { return escape(s); }
inline std::string arg(const char* s) { return escape(s); }
template <class T>
  requires std::is_arithmetic_v<T>
T arg(T v) {
  return v;
}

template <class T>
using arg_t = decltype(arg(std::declval<const std::remove_cvref_t<T>&>()));

}  // namespace detail

// fmt::format over a literal pattern, every argument passed as detail::arg
// says: html::format("<td class=\"num\">{}</td>", unit) escapes `unit`.
template <class... Args>
Markup format(fmt::format_string<detail::arg_t<Args>...> pattern, const Args&... args) {
  return Markup::trusted(fmt::format(pattern, detail::arg(args)...));
}

// `parts` joined by `separator`.
template <class Range>
Markup join(const Range& parts, const Markup& separator) {
  Markup out;
  bool first = true;
  for (const Markup& p : parts) {
    if (!first) out += separator;
    out += p;
    first = false;
  }
  return out;
}

}  // namespace gpuscope::html
