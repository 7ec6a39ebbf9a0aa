// A uniformly random single-cycle permutation of n slots (the distribution
// Sattolo's algorithm draws from), built from a shuffled visiting order so
// that every slot's position on the cycle is known and any walk's end can be
// checked in O(1). The chase probes (latency, texture) lay their cycles out
// from it and check every launch's end slot against walk().
#pragma once

#include "core/random.hpp"

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

// The same distribution drawn in `parts` parts, each a host thread's share
// of the work for the cycles of hundreds of MiB a GPU's sweep lays out (on
// one thread an H200's latency probe spent 1.9 s laying its cycles out,
// 0.57 s at 1 GiB). Each slot draws one of `parts` buckets
// (independent, uniform); the buckets, laid end to end in bucket order, are
// each shuffled by Fisher-Yates. Every order is then equally likely: an
// order arises from exactly one assignment of slots to buckets for each
// choice of bucket sizes c_1..c_T, with probability T^-n x prod(1/c_b!),
// and summed over the sizes (the multinomial theorem) that is 1/n!. Each
// part's buckets fit the host's caches, so the shuffle's misses go too.
//
// `run(body)` calls body(t) for every t in [0, parts) and returns when all
// have returned; the calls touch disjoint data, so they may run at once or
// in turn, and the cycle is the same either way. Needs 2 <= parts <= n.
template <typename Run>
void bucketed_cycle_into(Cycle& c, uint32_t n, uint64_t seed, unsigned parts, const Run& run) {
  const auto stream = [seed](uint64_t phase, unsigned t) {
    return SplitMix64(seed ^ (0x9e3779b97f4a7c15ULL * (phase * 0x10000 + t + 1)));
  };
  // Part t deals the slots of its range [lo(t), lo(t + 1)) into buckets.
  const auto lo = [n, parts](unsigned t) { return static_cast<uint32_t>(uint64_t{n} * t / parts); };
  c.order.resize(n);
  c.next.resize(n);
  c.position.resize(n);
  // The bucket of every slot, held in `position` until the scatter below.
  std::vector<std::vector<uint32_t>> counts(parts, std::vector<uint32_t>(parts, 0));
  run([&](unsigned t) {
    SplitMix64 rng = stream(1, t);
    for (uint32_t i = lo(t); i < lo(t + 1); ++i) {
      const uint32_t b = rng.below(parts);
      c.position[i] = b;
      ++counts[t][b];
    }
  });
  // Bucket b holds order[start[b], start[b + 1]); part t's slots of
  // bucket b go to offsets[t][b] on, in slot order.
  std::vector<uint32_t> start(parts + 1, 0);
  std::vector<std::vector<uint32_t>> offsets(parts, std::vector<uint32_t>(parts, 0));
  uint32_t at = 0;
  for (unsigned b = 0; b < parts; ++b) {
    start[b] = at;
    for (unsigned t = 0; t < parts; ++t) {
      offsets[t][b] = at;
      at += counts[t][b];
    }
  }
  start[parts] = at;
  run([&](unsigned t) {
    for (uint32_t i = lo(t); i < lo(t + 1); ++i) c.order[offsets[t][c.position[i]]++] = i;
  });
  run([&](unsigned b) {
    SplitMix64 rng = stream(2, b);
    uint32_t* bucket = c.order.data() + start[b];
    for (uint32_t i = start[b + 1] - start[b]; i > 1; --i) std::swap(bucket[i - 1], bucket[rng.below(i)]);
  });
  run([&](unsigned t) {
    for (uint32_t k = lo(t); k < lo(t + 1); ++k) {
      c.next[c.order[k]] = c.order[k + 1 == n ? 0 : k + 1];
      c.position[c.order[k]] = k;
    }
  });
}

// The bucketed build on `threads` host threads, one part each. Another
// cycle than the one-thread build's for the same seed; `threads` of 1, or n
// below `min_parallel`, is that build.
inline void random_cycle_into(Cycle& c, uint32_t n, uint64_t seed, unsigned threads,
                              uint32_t min_parallel = 1u << 20) {
  if (threads <= 1 || n < min_parallel || n < threads) {
    random_cycle_into(c, n, seed);
    return;
  }
  bucketed_cycle_into(c, n, seed, threads, [threads](const auto& body) {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(body, t);
    body(0u);
    for (auto& th : pool) th.join();
  });
}

inline Cycle random_cycle(uint32_t n, uint64_t seed) {
  Cycle c;
  random_cycle_into(c, n, seed);
  return c;
}

}  // namespace gpuscope
