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

// Fisher-Yates, with each swap's random slot drawn kAhead swaps early and
// its cache line prefetched: on arrays far larger than the host's caches
// each swap otherwise waits for one miss (32 Mi slots, 128 MiB: about a
// second). The draws and swaps are the plain algorithm's, in its order, so
// the cycle is the same for the same seed.
//
// Builds into `c`, reusing its vectors' memory: a sweep that builds cycle
// after cycle pays the first touch of its pages once, not at every size (at
// 16 Mi slots the page faults of the three fresh 64 MiB arrays took a third
// of the build on the 2-core development VM).
inline void random_cycle_into(Cycle& c, uint32_t n, uint64_t seed) {
  constexpr uint32_t kAhead = 32;  // draws in flight; a power of two
  c.order.resize(n);
  std::iota(c.order.begin(), c.order.end(), 0u);
  SplitMix64 rng(seed);
  uint32_t* order = c.order.data();
  auto draw = [&](uint32_t i) {
    const uint32_t j = rng.below(i + 1);
    __builtin_prefetch(order + j, 1);
    return j;
  };
  uint32_t ahead[kAhead];
  for (uint32_t d = 0; d < kAhead && d + 1 < n; ++d) ahead[d] = draw(n - 1 - d);
  for (uint32_t i = n - 1, step = 0; i > 0; --i, ++step) {
    const uint32_t j = ahead[step % kAhead];
    if (i > kAhead) ahead[step % kAhead] = draw(i - kAhead);
    std::swap(order[i], order[j]);
  }
  c.next.resize(n);
  c.position.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    if (k + kAhead < n) {
      __builtin_prefetch(c.next.data() + order[k + kAhead], 1);
      __builtin_prefetch(c.position.data() + order[k + kAhead], 1);
    }
    c.next[order[k]] = order[k + 1 == n ? 0 : k + 1];
    c.position[order[k]] = k;
  }
}

inline Cycle random_cycle(uint32_t n, uint64_t seed) {
  Cycle c;
  random_cycle_into(c, n, seed);
  return c;
}

}  // namespace gpuscope
