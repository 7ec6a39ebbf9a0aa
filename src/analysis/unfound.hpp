// Why a finding an analysis looked for is absent. Analyses keep their
// signatures (vectors of findings); where one gives up on a finding it would
// otherwise report, it says why through note_unfound(), and analyze_all()'s
// caller gets the reasons in Results::unfound. Outside a collection (an
// analysis called directly, as tests do) the reasons are dropped.
#pragma once

#include "core/results.hpp"

#include <string>
#include <vector>

namespace gpuscope::analysis {

// Records that `id` was not found, and why. The first reason for an id wins.
void note_unfound(const std::string& id, const std::string& reason, std::vector<std::string> evidence = {});

// Collects note_unfound() calls made on this thread while it lives.
class UnfoundCollector {
 public:
  UnfoundCollector();
  ~UnfoundCollector();
  UnfoundCollector(const UnfoundCollector&) = delete;
  UnfoundCollector& operator=(const UnfoundCollector&) = delete;
  // The reasons gathered, without those for ids `findings` holds after all.
  std::vector<Unfound> take(const std::vector<Finding>& findings);

 private:
  std::vector<Unfound> items_;
  UnfoundCollector* outer_;
  friend void note_unfound(const std::string&, const std::string&, std::vector<std::string>);
};

}  // namespace gpuscope::analysis
