// Sim family `atomics` (src/kernels/opencl/atomics.cl): ping_pong_global, ping_pong_local (two players
// advancing one counter in turns by compare-and-swap) and add_throughput
// (every work-item adding 1 `iters` times to its own word or to word 0),
// 32-bit or, with -DUSE_64=1, 64-bit counters.
//
// Semantics: the modelled device runs both players concurrently (work-groups
// of a GPU are resident together, and the host puts the local players in
// different waves), so a player never finds the counter at a value it cannot
// use for long: every move succeeds at its first attempt after the other's,
// and the kernels end with moves = rounds and spins = 0 for both players.
// A launch with only one player (a local partner outside the group, or 0)
// runs as the OpenCL C would alone: player 0 makes its first move, then
// spins on the counter until it has failed spin_cap times. The adds are
// associative, so each word's final value is computed at once: its start
// plus the adds it receives, wrapped to the counter's width.
//
// Time: a hand-off is one round trip of the counter (atomics.global_latency_ns
// through the shared cache, local_latency_ns through local memory); the moves
// alternate, so 2 x rounds of them in a row. Uncontended adds pipeline at
// global_adds_per_clock over the whole device; adds to one word serialise at
// contended_add_ns each.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::sim {
namespace {

bool wide(const SimLaunch& l) { return l.spec().flag("use_64"); }

struct Outcome {
  uint32_t moves = 0, spins = 0;
};

// What one player's loop of PING_PONG ends with, the other player present or
// not (see above).
Outcome play(uint32_t rounds, uint32_t spin_cap, bool partner_present) {
  Outcome o;
  if (rounds == 0 || spin_cap == 0) return o;
  if (partner_present) {
    o.moves = rounds;
    return o;
  }
  o.moves = 1;                         // i = 0: the counter is 0, as player 0 wants
  if (rounds > 1) o.spins = spin_cap;  // i = 1 waits for a move nobody makes
  return o;
}

void store_result(SimBuffer& result, uint32_t player, const Outcome& o) {
  if (result.size_bytes() < 4 * sizeof(uint32_t))
    throw DeviceError("sim: atomics result buffer holds fewer than 4 words");
  result.store<uint32_t>(4 * player, o.moves);
  result.store<uint32_t>(4 * (2 + player), o.spins);
}

// ping_pong_global(counter, rounds, spin_cap, result): two work-groups of
// one work-item each, player = group id.
double ping_pong_global(SimLaunch& l) {
  SimBuffer& counter = l.buffer(0);
  const uint32_t rounds = l.u32(1);
  const uint32_t spin_cap = l.u32(2);
  SimBuffer& result = l.buffer(3);
  if (l.global().total() != 2 || l.local().total() != 1)
    throw Unsupported(
        "sim: atomics ping_pong_global is modelled for its two players only (2 work-groups of 1)");
  const bool use_64 = wide(l);
  const uint64_t start = use_64 ? counter.load<uint64_t>(0) : counter.load<uint32_t>(0);
  if (start != 0)
    throw Unsupported(
        "sim: atomics ping_pong_global is modelled from a counter at 0 (the players' first "
        "move expects it)");
  const Outcome o = play(rounds, spin_cap, true);
  for (uint32_t player = 0; player < 2; ++player) store_result(result, player, o);
  const uint64_t moves = 2ull * o.moves;
  if (use_64)
    counter.store<uint64_t>(0, moves);
  else
    counter.store<uint32_t>(0, static_cast<uint32_t>(moves));
  return static_cast<double>(moves) * l.config().atomics.global_latency_ns;
}

// ping_pong_local(rounds, partner, spin_cap, result, __local counter): one
// work-group; players are work-items 0 and `partner`.
double ping_pong_local(SimLaunch& l) {
  if (l.local_bytes() < (wide(l) ? 8u : 4u))  // the counter, zeroed by work-item 0
    throw DeviceError("sim: atomics ping_pong_local's local counter is smaller than a count_t");
  const uint32_t rounds = l.u32(0);
  const uint32_t partner = l.u32(1);
  const uint32_t spin_cap = l.u32(2);
  SimBuffer& result = l.buffer(3);
  const size_t group = l.local().total();
  if (group == 0 || l.global().total() != group)
    throw Unsupported("sim: atomics ping_pong_local is modelled for one work-group of a given size");
  const bool both = partner != 0 && partner < group;
  const Outcome o = play(rounds, spin_cap, both);
  store_result(result, 0, o);
  if (both) store_result(result, 1, o);
  const double moves = 2.0 * o.moves;
  const auto& a = l.config().atomics;
  // Alone, player 0 spins: each failed attempt is a round trip too.
  return both ? moves * a.local_latency_ns : (o.moves + static_cast<double>(o.spins)) * a.local_latency_ns;
}

// add_throughput(words, iters, contended)
double add_throughput(SimLaunch& l) {
  SimBuffer& words = l.buffer(0);
  const uint32_t iters = l.u32(1);
  const bool contended = l.u32(2) != 0;
  const bool use_64 = wide(l);
  const size_t word = use_64 ? 8 : 4;
  const uint64_t items = l.global().total();
  const uint64_t n = contended ? std::min<uint64_t>(items, 1) : items;
  if (n * word > words.size_bytes()) throw DeviceError("sim: atomics add_throughput adds past its buffer");
  const uint64_t per_word = contended ? items * iters : iters;
  if (use_64) {
    auto v = words.load_all<uint64_t>(n);
    for (auto& x : v) x += per_word;
    words.write(0, std::as_bytes(std::span<const uint64_t>(v)));
  } else {
    auto v = words.load_all<uint32_t>(n);
    const auto add = static_cast<uint32_t>(per_word);  // wraps as the 32-bit counter does
    for (auto& x : v) x += add;
    words.write(0, std::as_bytes(std::span<const uint32_t>(v)));
  }
  const auto& c = l.config();
  const double adds = static_cast<double>(items) * iters;
  if (contended) return adds * c.atomics.contended_add_ns;
  return adds / (c.atomics.global_adds_per_clock * c.clock_ghz());
}

}  // namespace

void register_sim_family_atomics(FamilyTable& table) {
  table.add({"atomics", "ping_pong_global", 0, ping_pong_global});
  table.add({"atomics", "ping_pong_local", 0, ping_pong_local});
  table.add({"atomics", "add_throughput", 0, add_throughput});
}

}  // namespace gpuscope::sim
