// The running clock. One work-item runs a dependent chain x = x * x + c
// (an integer multiply-add: nothing can overlap or fold it), `rounds` x 16
// steps; the host checks x. With -DCOUNTERS=1 (NVIDIA, whose OpenCL takes
// inline PTX) the kernel also reads the SM's cycle counter (%clock64) and
// the global nanosecond timer (%globaltimer) around the chain, which gives
// cycles per ns directly.
// Elsewhere the chain's time per step, from profiling events, is compared
// with the reported clock (the probe's file says how).
//
// out[0] = clock64 cycles, out[1] = globaltimer ns (0 and 0 without COUNTERS),
// out[2] = the chain's final value.

#define STEP x = x * x + c;
#define STEP4 STEP STEP STEP STEP
#define STEP16 STEP4 STEP4 STEP4 STEP4

__kernel void chain(__global ulong* out, uint rounds, uint seed) {
  uint x = seed;
  const uint c = seed | 1u;
#if COUNTERS
  ulong c0, c1, t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)::"memory");
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0)::"memory");
  // An empty statement that claims to change x: the chain cannot start
  // before the first reads.
  asm volatile("" : "+r"(x)::"memory");
#endif
  for (uint r = 0; r < rounds; ++r) {
    STEP16
  }
#if COUNTERS
  // An empty statement that uses x: the final reads cannot be scheduled
  // before the chain has finished.
  asm volatile("" ::"r"(x) : "memory");
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1)::"memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)::"memory");
  out[0] = c1 - c0;
  out[1] = t1 - t0;
#else
  out[0] = 0;
  out[1] = 0;
#endif
  out[2] = x;
}
