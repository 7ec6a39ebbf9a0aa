// Atomic operation latency and throughput (the Mali-G52 article's cross-thread
// compare-and-swap and atomic-add experiments).
//
// OpenCL promises no forward progress between work-groups, nor between
// work-items of a group outside barriers: a work-item spinning on another
// may wait forever if the other is not scheduled (PoCL runs work-groups one
// after another and the items of a group in a loop). So every spin here is
// capped (`spin_cap` failed attempts per work-item in total) and a work-item
// that hits the cap stops and says so in its result; the host then reports
// the ping-pong as not measurable instead of hanging.
//
// Build options:
//   -DUSE_64=1     64-bit counters (needs cl_khr_int64_base_atomics)

#if USE_64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef ulong count_t;
#define CAS(p, cmp, val) atom_cmpxchg(p, cmp, val)
#define ADD(p, v) atom_add(p, v)
#else
typedef uint count_t;
#define CAS(p, cmp, val) atomic_cmpxchg(p, cmp, val)
#define ADD(p, v) atomic_add(p, v)
#endif

// Two players take turns: player p may move only when the counter equals
// 2*i + p, and moves it on by one with a compare-and-swap. Each move must
// see the other player's previous move, so the time per move is one
// cross-core (or cross-lane) atomic round trip. result[player] = moves made,
// result[2 + player] = failed attempts (spins).
#define PING_PONG(counter)                                       \
  uint spins = 0, moves = 0;                                     \
  for (uint i = 0; i < rounds && spins < spin_cap; ++i) {        \
    const count_t want = (count_t)(2 * i + player);              \
    while (CAS(counter, want, want + 1) != want) {               \
      if (++spins >= spin_cap) break;                            \
    }                                                            \
    if (spins < spin_cap) ++moves;                               \
  }                                                              \
  result[player] = moves;                                        \
  result[2 + player] = spins;

// Global: two work-groups of one work-item each, counter in global memory.
__kernel void ping_pong_global(volatile __global count_t* counter, uint rounds, uint spin_cap,
                               __global uint* result) {
  const uint player = (uint)get_group_id(0);
  PING_PONG(counter)
}

// Local: one work-group; the players are work-items 0 and `partner` (the
// host puts them in different hardware threads/warps: a warp's lanes
// spinning on each other would measure divergence, not atomics).
__kernel void ping_pong_local(uint rounds, uint partner, uint spin_cap, __global uint* result,
                              volatile __local count_t* counter) {
  const uint lid = (uint)get_local_id(0);
  if (lid == 0) *counter = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0 || lid == partner) {
    const uint player = lid == 0 ? 0 : 1;
    PING_PONG(counter)
  }
}

// Atomic-add throughput: every work-item adds 1 `iters` times, either to its
// own word (uncontended: words are consecutive, as a real histogram's would
// be) or all to word 0 (fully contended). The host checks the totals.
__kernel void add_throughput(volatile __global count_t* words, uint iters, uint contended) {
  const size_t slot = contended ? 0 : get_global_id(0);
  for (uint i = 0; i < iters; ++i) ADD(words + slot, (count_t)1);
}
