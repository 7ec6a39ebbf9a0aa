// A uniformly random single-cycle permutation of n slots (the distribution
// Sattolo's algorithm draws from), built from a shuffled visiting order so
// that every slot's position on the cycle is known and any walk's end can be
// checked in O(1). The chase probes (latency, texture) lay their cycles out
// from it and check every launch's end slot against walk().
#pragma once

#include "core/random.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <thread>
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
// of the build). next and position are scattered from the order on up to 16
// host threads above 1 Mi slots, each thread taking a fixed range of the
// order, so the result does not depend on the thread count (on one thread
// the scatter took 0.64 s of the 1.4 s a 16 Mi-slot cycle took to build on
// the 2-core development VM).
inline void random_cycle_into(Cycle& c, uint32_t n, uint64_t seed) {
  constexpr uint32_t kAhead = 32;  // draws and scatters in flight; a power of two
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
  uint32_t* next = c.next.data();
  uint32_t* position = c.position.data();
  // Scatters order[k] for k in [begin, end): every slot is written by
  // exactly one k, so disjoint ranges write disjoint slots.
  auto scatter = [=](uint32_t begin, uint32_t end) {
    for (uint32_t k = begin; k < end; ++k) {
      if (k + kAhead < n) {
        __builtin_prefetch(next + order[k + kAhead], 1);
        __builtin_prefetch(position + order[k + kAhead], 1);
      }
      next[order[k]] = order[k + 1 == n ? 0 : k + 1];
      position[order[k]] = k;
    }
  };
  constexpr uint32_t kParallelFrom = 1u << 20;
  const uint32_t threads =
      n < kParallelFrom ? 1 : std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, 16);
  if (threads == 1) {
    scatter(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const uint64_t per = n / threads + 1;
  auto bound = [&](uint32_t t) { return static_cast<uint32_t>(std::min<uint64_t>(n, t * per)); };
  for (uint32_t t = 1; t < threads; ++t) workers.emplace_back(scatter, bound(t), bound(t + 1));
  scatter(0, bound(1));
  for (auto& w : workers) w.join();
}

inline Cycle random_cycle(uint32_t n, uint64_t seed) {
  Cycle c;
  random_cycle_into(c, n, seed);
  return c;
}

}  // namespace gpuscope
