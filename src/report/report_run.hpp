// What every reporter that shows runs side by side takes: one column per run.
#pragma once

#include <memory>
#include <string>

#include "core/results.hpp"
#include "report/run_index.hpp"

namespace gpuscope {

// One column of a report: a run, or a reference profile (reference_as_results)
// whose points are overlaid as markers, not as a measured curve.
struct ReportRun {
  std::string label;  // short name shown in legends and column heads
  const Results* results = nullptr;
  bool reference = false;

  // Lookups by id into *results (run_index.hpp), built on first use;
  // *results must not change while this ReportRun is in use.
  const RunIndex& index() const {
    if (!index_) index_ = std::make_shared<const RunIndex>(*results);
    return *index_;
  }
  mutable std::shared_ptr<const RunIndex> index_{};
};

}  // namespace gpuscope
