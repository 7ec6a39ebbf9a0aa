// A uniformly random single-cycle permutation of n slots (the distribution
// Sattolo's algorithm draws from), built from a shuffled visiting order so
// that every slot's position on the cycle is known and any walk's end can be
// checked in O(1). The chase probes (latency, texture) lay their cycles out
// from it and check every launch's end slot against walk().
#pragma once

#include "core/random.hpp"

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace gpuscope {

struct Cycle {
  std::vector<uint32_t> next;      // next[slot] = the slot visited after it
  std::vector<uint32_t> order;     // order[k] = the k-th slot visited
  std::vector<uint32_t> position;  // position[slot] = k such that order[k] == slot

  uint32_t walk(uint32_t from, uint64_t hops) const { return order[(position[from] + hops) % order.size()]; }
  uint32_t size() const { return static_cast<uint32_t>(order.size()); }
};

inline Cycle random_cycle(uint32_t n, uint64_t seed) {
  Cycle c;
  c.order.resize(n);
  std::iota(c.order.begin(), c.order.end(), 0u);
  SplitMix64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) std::swap(c.order[i], c.order[rng.below(i + 1)]);
  c.next.resize(n);
  c.position.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    c.next[c.order[k]] = c.order[(k + 1) % n];
    c.position[c.order[k]] = k;
  }
  return c;
}

}  // namespace gpuscope
