// core/printable: nothing from outside reaches a terminal or a report as a
// control character.
#include "core/printable.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

TEST(Printable, ControlCharactersAreEscapedAndTextKept) {
  EXPECT_EQ(printable("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac\nline\ttab"), "caf\xc3\xa9 \xe2\x82\xac\nline\ttab");
  EXPECT_EQ(printable("\x1b]0;owned\x07\x1b[2J"), "\\x1b]0;owned\\x07\\x1b[2J");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\r\x7f"), "\\x0d\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");  // C1 CSI
}

// Text that shows in another order than it is stored (bidirectional
// embeddings, overrides, isolates and marks) or breaks a line where no
// newline is seen (line and paragraph separators) deceives a reader of a
// terminal, a Markdown file or a page alike.
TEST(Printable, BidiControlsAndSeparatorsAreEscaped) {
  EXPECT_EQ(printable("abc\u202Edcb"), "abc\\u202edcb");
  EXPECT_EQ(printable("\u202A\u202B\u202C\u202D"), "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(printable("\u2066\u2067\u2068\u2069"), "\\u2066\\u2067\\u2068\\u2069");
  EXPECT_EQ(printable("\u200E\u200F\u061C"), "\\u200e\\u200f\\u061c");
  EXPECT_EQ(printable("a\u2028b\u2029c"), "a\\u2028b\\u2029c");
  EXPECT_FALSE(is_printable("\u202E"));
  EXPECT_FALSE(is_printable("\u2028"));
  EXPECT_TRUE(is_printable(printable("\u202E\u2069\u2029")));
  // Their neighbours pass: a zero-width joiner, an em dash, Arabic text.
  EXPECT_EQ(printable("\u200D\u2014\u0627\u0644"), "\u200D\u2014\u0627\u0644");
}

TEST(Printable, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("ab\xe2\x82"), "ab\\xe2\\x82");       // cut short
  EXPECT_EQ(first_invalid_utf8("ab\xe2\x82"), 2u);
  EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9"), std::string_view::npos);
}

TEST(Printable, JsonStringsAndKeysAreEscapedAtEveryDepth) {
  const nlohmann::json j = {{"\x1b", {{"k", {"\x07", 1, true}}}}};
  const nlohmann::json p = printable_json(j);
  EXPECT_EQ(p.dump(), R"({"\\x1b":{"k":["\\x07",1,true]}})");
  EXPECT_TRUE(is_printable(printable("\x1b\x9b\xff")));
  EXPECT_FALSE(is_printable("\x1b"));
}

TEST(Printable, DeviceInfoStringsAreEscaped) {
  DeviceInfo d;
  d.name = "GPU\x1b[31m";
  d.extensions = {"cl_khr_\x00fp64"};
  d.vendor_info = {{"board", "\x1b"}};
  const DeviceInfo p = printable(d);
  EXPECT_EQ(p.name, "GPU\\x1b[31m");
  EXPECT_EQ(p.vendor_info["board"], "\\x1b");
}

}  // namespace
}  // namespace gpuscope
