// Memory latency by dependent pointer chase (the experiment of the 004
// paper's Figure 6, without its index arithmetic).
//
// Build options:
//   -DADDR_BITS=32|64  width of a device pointer (CL_DEVICE_ADDRESS_BITS)
//   -DINDEX_CHASE=1    (optional) slots hold the next slot's word index and
//                      the chase is `p = slots[p]`: the Vulkan form for
//                      devices without buffer device addresses, here so that
//                      both APIs can run it (--chase index)
//
// The buffer is an array of slots, one per cache line (or whatever stride
// the host chose); the first word of each slot holds the absolute address
// of the next slot on a random cycle. The chase is then `p = *p`: each load
// takes its address straight from the previous load, so the measured time
// per hop is the load-to-use latency with nothing else on the critical path.

#if ADDR_BITS == 64
typedef ulong addr_t;
#else
typedef uint addr_t;
#endif
#ifndef INDEX_CHASE
#define INDEX_CHASE 0
#endif

// One work-item per slot: turns the host's slot indices into addresses.
// Done on the device because only the device knows where the buffer lives.
__kernel void link(__global addr_t* slots, __global const uint* next, uint stride_words,
                   uint count) {
  const uint i = (uint)get_global_id(0);
#if INDEX_CHASE
  if (i < count) slots[(size_t)i * stride_words] = (addr_t)(next[i] * stride_words);
#else
  if (i < count) slots[(size_t)i * stride_words] = (addr_t)(slots + (size_t)next[i] * stride_words);
#endif
}

#if INDEX_CHASE
#define HOP p = (uint)slots[p];
#else
#define HOP p = (__global const addr_t*)(*p);
#endif
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4

// A single work-item walks `rounds * 16` hops from slot `start`. The loop
// counter is independent of the chain, so it overlaps with the loads; the
// 16-fold unrolling keeps its branch out of the way. The slot the walk ends
// on is written out so the host can check the walk really happened (a
// compiler that dropped the loads would be caught, not timed).
__kernel void chase(__global const addr_t* slots, uint start, uint stride_words, uint rounds,
                    __global uint* end_slot) {
#if INDEX_CHASE
  uint p = start * stride_words;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  end_slot[0] = p / stride_words;
#else
  __global const addr_t* p = slots + (size_t)start * stride_words;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  end_slot[0] = (uint)((size_t)(p - slots) / stride_words);
#endif
}

// Work-item i walks `rounds * 16` hops from slot starts[i] and writes the
// slot it ends on to ends[i]: many chains at once in one work-group, each
// over its own stretch of the cycle. The probe's warm-up, which walks a
// long cycle whole on one compute unit (as `chase` does, one work-group) in
// a chain's time instead of the cycle's.
__kernel void walk(__global const addr_t* slots, __global const uint* starts, uint stride_words, uint rounds,
                   __global uint* ends) {
  const size_t i = get_global_id(0);
#if INDEX_CHASE
  uint p = starts[i] * stride_words;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  ends[i] = p / stride_words;
#else
  __global const addr_t* p = slots + (size_t)starts[i] * stride_words;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  ends[i] = (uint)((size_t)(p - slots) / stride_words);
#endif
}

// The index chase's address arithmetic without its load, as a dependent
// chain of the same length: p = low 32 bits of (p * scale + 1), scale a
// run-time 8 (a slot's bytes) so that no compiler folds the chain. Writes
// where the chain ends; the host repeats the recurrence to check it.
#define ARITH p = (uint)((ulong)p * scale + 1);
#define ARITH4 ARITH ARITH ARITH ARITH
#define ARITH16 ARITH4 ARITH4 ARITH4 ARITH4
__kernel void chase_arith(uint start, uint scale, uint rounds, __global uint* end_value) {
  uint p = start;
  for (uint r = 0; r < rounds; ++r) {
    ARITH16
  }
  end_value[0] = p;
}
