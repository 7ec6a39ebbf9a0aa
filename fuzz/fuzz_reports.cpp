// libFuzzer target: the report writers (terminal summary and comparison,
// Markdown, HTML) over results read from fuzzed text and analysed, as
// `gpuscope report`, `compare` and `analyze --out` write them. Whatever the
// input, nothing they write may hold a control character other than
// newline and tab, a bidirectional control or a line or paragraph
// separator: no escape sequence reaches a terminal, no NUL a report, no text
// shows in another order than it is stored (core/printable.hpp).
#include "analysis/analyze.hpp"
#include "core/error.hpp"
#include "json_mutator.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

void check_no_controls(const std::string& text) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) __builtin_trap();
  }
  for (const char* deceiving : {"\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068",
                                "\u2069", "\u200E", "\u200F", "\u061C", "\u2028", "\u2029"})
    if (text.find(deceiving) != std::string::npos) __builtin_trap();
}

}  // namespace

// Mutations of the document rather than its bytes (json_mutator.hpp).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return gpuscope::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Results r;
  try {
    r = parse_results_text(text, "fuzz.json");
    // `report` shows the stored findings; `analyze` recomputes them: both.
    check_no_controls(format_summary(r));
    r.findings = analysis::analyze_all(r);
  } catch (const UsageError&) {
    return 0;
  }
  const std::vector<ReportRun> one = {{r.device.name, &r, false}};
  const std::vector<ReportRun> two = {{r.device.name, &r, false}, {"again", &r, false}};
  check_no_controls(format_summary(r, {}, &r));
  check_no_controls(format_markdown(one));
  check_no_controls(format_comparison(two));
  check_no_controls(render_html_report(two));
  return 0;
}
