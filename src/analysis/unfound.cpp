#include "analysis/unfound.hpp"

#include <algorithm>
#include <set>

namespace gpuscope::analysis {
namespace {
thread_local UnfoundCollector* active = nullptr;
}

UnfoundCollector::UnfoundCollector() : outer_(active) { active = this; }
UnfoundCollector::~UnfoundCollector() { active = outer_; }

void note_unfound(const std::string& id, const std::string& reason, std::vector<std::string> evidence) {
  if (!active) return;
  for (const auto& u : active->items_)
    if (u.id == id) return;
  active->items_.push_back({id, reason, std::move(evidence)});
}

std::vector<Unfound> UnfoundCollector::take(const std::vector<Finding>& findings) {
  std::set<std::string> have;
  for (const auto& f : findings) have.insert(f.id);
  std::vector<Unfound> out;
  for (auto& u : items_)
    if (!have.count(u.id)) out.push_back(std::move(u));
  items_.clear();
  return out;
}

}  // namespace gpuscope::analysis
