// The sim's cache model against plain references: the open-addressing index
// of wide sets against std::unordered_map under random inserts and erases
// (keys that collide, runs that wrap past the table's end), and a fully
// associative LRU cache against a list-based LRU of the same capacity.
#include "backends/sim/cache_model.hpp"
#include "core/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <unordered_map>
#include <vector>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

TEST(SimCacheModel, UnitIndexAgreesWithAMapUnderInsertsAndErases) {
  constexpr uint64_t kCapacity = 64;  // 128 slots: long runs at up to half load
  UnitIndex index;
  index.reset(kCapacity);
  std::unordered_map<uint64_t, uint32_t> want;
  SplitMix64 rng(7);
  // Keys from a small range, many sharing a home slot.
  for (uint32_t op = 0; op < 200000; ++op) {
    const uint64_t key = rng.below(300);
    const bool present = want.count(key) != 0;
    if (!present && want.size() < kCapacity && rng.below(2) == 0) {
      index.insert(key, op);
      want[key] = op;
    } else if (present && rng.below(3) == 0) {
      index.erase(key);
      want.erase(key);
    }
    const uint64_t probe = rng.below(300);
    const auto it = want.find(probe);
    ASSERT_EQ(index.find(probe), it == want.end() ? UnitIndex::kAbsent : it->second) << "op " << op << " key " << probe;
  }
  index.clear();
  for (uint64_t k = 0; k < 300; ++k) EXPECT_EQ(index.find(k), UnitIndex::kAbsent);
}

TEST(SimCacheModel, AFullyAssociativeLruCacheKeepsTheMostRecentUnits) {
  constexpr uint32_t kEntries = 48, kShift = 6;  // one set of 48 ways: looked up through UnitIndex
  SetAssociativeCache cache(kEntries, kEntries, kShift, Replacement::lru, 1);
  std::list<uint64_t> lru;  // most recent first
  SplitMix64 rng(11);
  for (uint32_t op = 0; op < 100000; ++op) {
    const uint64_t unit = rng.below(kEntries + 16);
    const auto it = std::find(lru.begin(), lru.end(), unit);
    const bool want_hit = it != lru.end();
    if (want_hit) lru.erase(it);
    lru.push_front(unit);
    if (lru.size() > kEntries) lru.pop_back();
    ASSERT_EQ(cache.access(unit << kShift), want_hit) << "op " << op << " unit " << unit;
  }
}

}  // namespace
