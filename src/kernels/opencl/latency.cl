// Memory latency by dependent pointer chase (the experiment of the 004
// paper's Figure 6, without its index arithmetic).
//
// Build options:
//   -DADDR_BITS=32|64  width of a device pointer (CL_DEVICE_ADDRESS_BITS)
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

// One work-item per slot: turns the host's slot indices into addresses.
// Done on the device because only the device knows where the buffer lives.
__kernel void link(__global addr_t* slots, __global const uint* next, uint stride_words,
                   uint count) {
  const uint i = (uint)get_global_id(0);
  if (i < count) slots[(size_t)i * stride_words] = (addr_t)(slots + (size_t)next[i] * stride_words);
}

#define HOP p = (__global const addr_t*)(*p);
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4

// A single work-item walks `rounds * 16` hops from slot `start`. The loop
// counter is independent of the chain, so it overlaps with the loads; the
// 16-fold unrolling keeps its branch out of the way. The slot the walk ends
// on is written out so the host can check the walk really happened (a
// compiler that dropped the loads would be caught, not timed).
__kernel void chase(__global const addr_t* slots, uint start, uint stride_words, uint rounds,
                    __global uint* end_slot) {
  __global const addr_t* p = slots + (size_t)start * stride_words;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  end_slot[0] = (uint)((size_t)(p - slots) / stride_words);
}
