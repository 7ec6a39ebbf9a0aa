// A sustained arithmetic load: every work-item runs 8 independent FP32 fma
// chains for `rounds` x 8 steps (64 fmas a round: enough independent work to
// keep every lane's pipeline full), then stores the sum of its chains so that
// nothing is optimised away and the host can check it. fma() is correctly
// rounded, so the host reproduces the result bit for bit.
//
// Chains start from seeds that depend on the work-item's id modulo 64 only
// (the host checks a few ids of each residue; the sim computes 64 chains).
// x = fma(x, a, b) with a just under 1 and b small keeps x bounded.
//
// With -DCOUNTERS=1 (NVIDIA: inline PTX), work-item 0 also records the SM cycle counter
// (%clock64) and the global ns timer (%globaltimer) around its chains:
// clock[0] = cycles, clock[1] = ns; their ratio is the clock it ran at.
//
// Ops per launch: global size x rounds x 64 fmas (2 flops each).

#define STEP(x) x = fma(x, a, b);
#define ROUND \
  STEP(x0) STEP(x1) STEP(x2) STEP(x3) STEP(x4) STEP(x5) STEP(x6) STEP(x7)

__kernel void fma_load(__global float* out, __global ulong* clock, uint rounds, float a, float b) {
  const uint gid = get_global_id(0);
  const float s = (float)(gid & 63u) * 0.0078125f;
  float x0 = s, x1 = s + 0.125f, x2 = s + 0.25f, x3 = s + 0.375f;
  float x4 = s + 0.5f, x5 = s + 0.625f, x6 = s + 0.75f, x7 = s + 0.875f;
#if COUNTERS
  ulong c0 = 0, t0 = 0;
  if (gid == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)::"memory");
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0)::"memory");
  }
#endif
  for (uint r = 0; r < rounds; ++r) {
    ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
  }
  out[gid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if COUNTERS
  if (gid == 0) {
    ulong c1, t1;
    asm volatile("" ::"f"(x0), "f"(x7) : "memory");
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1)::"memory");
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)::"memory");
    clock[0] = c1 - c0;
    clock[1] = t1 - t0;
  }
#else
  if (gid == 0) {
    clock[0] = 0;
    clock[1] = 0;
  }
#endif
}
