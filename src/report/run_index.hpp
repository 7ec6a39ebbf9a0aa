// Lookups by id over one run, built once: a reporter that looks findings or
// series up by id inside a loop over findings asks this rather than
// Results::find_finding (a scan), so that every report and comparison is
// linear in the findings and series it shows (issue 46: 32,000 findings took
// 55 s when each was found by a scan).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/results.hpp"

namespace gpuscope {

class RunIndex {
 public:
  // `r` must outlive the index and not change while it is used. Where ids
  // repeat, the first holder of an id is found, as Results::find_* finds it.
  explicit RunIndex(const Results& r) {
    findings_.reserve(r.findings.size());
    for (const auto& f : r.findings) {
      findings_.try_emplace(f.id, &f);
      for (const auto& e : f.evidence) {
        auto& list = citing_[e];
        // A finding that names one series twice cites it once.
        if (list.empty() || list.back() != &f) list.push_back(&f);
      }
    }
    series_.reserve(r.series.size());
    for (const auto& s : r.series) series_.try_emplace(s.id, &s);
  }

  const Finding* finding(const std::string& id) const {
    const auto it = findings_.find(id);
    return it == findings_.end() ? nullptr : it->second;
  }
  const Series* series(const std::string& id) const {
    const auto it = series_.find(id);
    return it == series_.end() ? nullptr : it->second;
  }
  // The findings whose evidence names `series_id`, in the run's order.
  const std::vector<const Finding*>& citing(const std::string& series_id) const {
    static const std::vector<const Finding*> kNone;
    const auto it = citing_.find(series_id);
    return it == citing_.end() ? kNone : it->second;
  }

 private:
  std::unordered_map<std::string, const Finding*> findings_;
  std::unordered_map<std::string, const Series*> series_;
  std::unordered_map<std::string, std::vector<const Finding*>> citing_;
};

}  // namespace gpuscope
