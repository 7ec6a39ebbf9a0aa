// libFuzzer target: results.json text through the reader and every analysis,
// as `gpuscope analyze` takes it. Bad input must end in UsageError (exit 2);
// anything else escaping, a crash, a hang or a sanitizer report is a finding.
#include "analysis/analyze.hpp"
#include "core/error.hpp"
#include "json_mutator.hpp"
#include "report/results_json.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

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
  } catch (const UsageError&) {
    return 0;
  }
  try {
    r.findings = analysis::analyze_all(r);
  } catch (const UsageError&) {
    return 0;
  }
  // What `analyze --out` writes must read back.
  const Results again = parse_results_text(
      to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "again.json");
  if (again.series.size() != r.series.size() || again.findings.size() != r.findings.size()) __builtin_trap();
  return 0;
}
