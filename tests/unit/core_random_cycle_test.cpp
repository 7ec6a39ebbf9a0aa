// core/random_cycle: one cycle through every slot, walks that agree with it,
// and an order that is a function of (n, seed) and uncorrelated with the index.
#include "core/random_cycle.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace gpuscope {
namespace {

const uint32_t kSizes[] = {1, 2, 3, 1000, 300'007};

// The bucketed build's parts run one after another on this thread.
const auto kInTurn = [](unsigned parts) {
  return [parts](const auto& body) {
    for (unsigned t = 0; t < parts; ++t) body(t);
  };
};

TEST(RandomCycle, IsOneCycleThroughEverySlot) {
  for (uint32_t n : kSizes) {
    const Cycle c = random_cycle(n, 7);
    ASSERT_EQ(c.size(), n);
    std::vector<bool> seen(n, false);
    uint32_t slot = 0;
    for (uint32_t hop = 0; hop < n; ++hop) {
      ASSERT_FALSE(seen[slot]) << "n=" << n << ": slot " << slot << " visited twice";
      seen[slot] = true;
      ASSERT_EQ(c.order[c.position[slot]], slot);
      slot = c.next[slot];
    }
    EXPECT_EQ(slot, 0u) << "n=" << n << ": the walk does not close after n hops";
  }
}

TEST(RandomCycle, WalkAgreesWithNext) {
  const Cycle c = random_cycle(300'007, 11);
  uint32_t slot = 12345;
  for (uint64_t hops = 0; hops < 5000; ++hops) {
    ASSERT_EQ(c.walk(12345, hops), slot);
    slot = c.next[slot];
  }
  EXPECT_EQ(c.walk(12345, 300'007ULL * 3 + 1), c.next[12345]);
}

// The prefetching shuffle draws and swaps as plain Fisher-Yates does, so a
// seed gives the cycle it always gave (recorded runs name their seeds).
TEST(RandomCycle, IsPlainFisherYates) {
  for (uint32_t n : {1u, 2u, 32u, 33u, 34u, 1000u, 300'007u}) {
    std::vector<uint32_t> want(n);
    for (uint32_t i = 0; i < n; ++i) want[i] = i;
    SplitMix64 rng(n);
    for (uint32_t i = n - 1; i > 0; --i) std::swap(want[i], want[rng.below(i + 1)]);
    EXPECT_EQ(random_cycle(n, n).order, want) << "n=" << n;
  }
}

// A rebuild reuses the last cycle's memory, shrinking or growing: the cycle
// is the one a fresh build gives.
TEST(RandomCycle, RebuildInPlaceGivesTheFreshCycle) {
  const uint32_t n = (1u << 21) + 3;
  Cycle c = random_cycle(1000, 9);  // a used Cycle, smaller than the next
  random_cycle_into(c, n, 21);
  ASSERT_EQ(c.size(), n);
  for (uint32_t k = 0; k < n; ++k) {
    ASSERT_EQ(c.next[c.order[k]], c.order[k + 1 == n ? 0 : k + 1]) << "k=" << k;
    ASSERT_EQ(c.position[c.order[k]], k) << "k=" << k;
  }
  const std::vector<uint32_t> order = c.order;
  random_cycle_into(c, 5000, 4);  // shrink, then grow back
  random_cycle_into(c, n, 21);
  EXPECT_EQ(c.order, order);
  EXPECT_EQ(random_cycle(n, 21).next, c.next);
}

TEST(RandomCycle, IsAFunctionOfSizeAndSeed) {
  EXPECT_EQ(random_cycle(1000, 5).order, random_cycle(1000, 5).order);
  EXPECT_NE(random_cycle(1000, 5).order, random_cycle(1000, 6).order);
}

// A uniform order is uncorrelated with the identity: the rank correlation of
// k and order[k] is about normal with deviation 1/sqrt(n).
TEST(RandomCycle, OrderIsUncorrelatedWithIndex) {
  const uint32_t n = 100'000;
  const std::vector<uint32_t> o = random_cycle(n, 3).order;
  double sum = 0;
  const double mean = (n - 1) / 2.0;
  for (uint32_t k = 0; k < n; ++k) sum += (k - mean) * (o[k] - mean);
  const double rho = sum / n / ((static_cast<double>(n) * n - 1) / 12.0);
  EXPECT_LT(std::abs(rho), 5 / std::sqrt(static_cast<double>(n)));
}

// The threaded build (a GPU host's): one cycle through every slot, whatever
// the thread count, a function of (n, seed, threads) that its parts run in
// turn give too, and one thread is the plain build.
TEST(RandomCycleThreaded, IsOneCycleAndAFunctionOfItsArguments) {
  const uint32_t n = (1u << 20) + 17;
  for (unsigned threads : {2u, 3u, 8u}) {
    Cycle c;
    random_cycle_into(c, n, 5, threads);
    ASSERT_EQ(c.size(), n);
    std::vector<bool> seen(n, false);
    uint32_t slot = 0;
    for (uint32_t hop = 0; hop < n; ++hop) {
      ASSERT_FALSE(seen[slot]) << threads << " threads: slot " << slot << " visited twice";
      seen[slot] = true;
      ASSERT_EQ(c.order[c.position[slot]], slot);
      slot = c.next[slot];
    }
    EXPECT_EQ(slot, 0u) << threads << " threads: the walk does not close after n hops";
    Cycle again;
    random_cycle_into(again, n, 5, threads);
    EXPECT_EQ(again.order, c.order) << threads << " threads";
    Cycle in_turn;
    bucketed_cycle_into(in_turn, n, 5, threads, kInTurn(threads));
    EXPECT_EQ(in_turn.order, c.order) << threads << " parts in turn, as on threads";
    EXPECT_EQ(in_turn.next, c.next) << threads << " parts in turn, as on threads";
  }
  Cycle one;
  random_cycle_into(one, n, 5, 1);
  EXPECT_EQ(one.order, random_cycle(n, 5).order);
}

// Every order of 4 slots equally likely from the bucketed shuffle in 3
// parts: 24000 seeds, about 1000 each; a chi-square of 23 degrees of
// freedom above 60 has odds below 1 in 10^4 for a uniform draw. The parts
// run in turn, which gives the threaded build's cycle (as the first draw
// and IsOneCycleAndAFunctionOfItsArguments check) without starting 8
// threads a draw.
TEST(RandomCycleThreaded, EveryOrderIsEquallyLikely) {
  Cycle threaded, in_turn;
  random_cycle_into(threaded, 4, 11, 3, 0);
  bucketed_cycle_into(in_turn, 4, 11, 3, kInTurn(3));
  ASSERT_EQ(in_turn.order, threaded.order);
  std::vector<int> counts(256, 0);
  const int draws = 24000;
  for (int seed = 0; seed < draws; ++seed) {
    Cycle c;
    bucketed_cycle_into(c, 4, static_cast<uint64_t>(seed), 3, kInTurn(3));
    ++counts[c.order[0] * 64 + c.order[1] * 16 + c.order[2] * 4 + c.order[3]];
  }
  double chi2 = 0;
  int orders = 0;
  for (int key = 0; key < 256; ++key) {
    const int a = key / 64, b = key / 16 % 4, c = key / 4 % 4, d = key % 4;
    if (a == b || a == c || a == d || b == c || b == d || c == d) {
      EXPECT_EQ(counts[key], 0) << "not a permutation: " << key;
      continue;
    }
    ++orders;
    const double want = draws / 24.0;
    chi2 += (counts[key] - want) * (counts[key] - want) / want;
  }
  EXPECT_EQ(orders, 24);
  EXPECT_LT(chi2, 60) << "chi-square over the 24 orders";
}

// Slot and visiting order are uncorrelated in the threaded build too (its
// buckets are contiguous in the order and hold slots from every thread).
TEST(RandomCycleThreaded, OrderIsUncorrelatedWithIndex) {
  const uint32_t n = 1u << 20;
  Cycle c;
  random_cycle_into(c, n, 3, 4);
  double sum = 0;
  const double mean = (n - 1) / 2.0;
  for (uint32_t k = 0; k < n; ++k) sum += (k - mean) * (c.order[k] - mean);
  const double rho = sum / n / ((static_cast<double>(n) * n - 1) / 12.0);
  EXPECT_LT(std::abs(rho), 5 / std::sqrt(static_cast<double>(n)));
}

}  // namespace
}  // namespace gpuscope
