// Instruction cache: throughput of a loop whose body is BODY float adds,
// for bodies from a few hundred bytes of code to far more than any
// instruction cache. While the body fits, the front end streams it from the
// cache at full rate; once it does not, every iteration refetches it from
// further away and throughput falls.
//
// Build options:
//   -DBODY=N   adds per loop iteration, a multiple of 64 below 32768
//
// Shape, and why:
// - The body is written out by the preprocessor (blocks of 64 adds selected
//   by BODY's bits), not by a loop the compiler may or may not unroll: the
//   code really grows with BODY.
// - Eight independent accumulators take the adds in turn, so the adds are
//   issue-bound, not latency-bound, as in the Mali-G52 article's experiment.
// - Floating-point addition is not associative and nothing here allows
//   fast-math, so `x + a + a` cannot become `x + 2a`: every add stays. `a`
//   and the starting values are arguments and buffer contents the compiler
//   cannot see.
// - The host passes a = 1 and small integer starting values, and keeps
//   every accumulator below 2^24, where float addition of 1 is exact: each
//   output is then exactly 8 * (start + iters * BODY / 8) + 28, checked on
//   the host.

#define ADD8 x0 += a; x1 += a; x2 += a; x3 += a; x4 += a; x5 += a; x6 += a; x7 += a;
#define ADD64 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8
#define ADD128 ADD64 ADD64
#define ADD256 ADD128 ADD128
#define ADD512 ADD256 ADD256
#define ADD1024 ADD512 ADD512
#define ADD2048 ADD1024 ADD1024
#define ADD4096 ADD2048 ADD2048
#define ADD8192 ADD4096 ADD4096
#define ADD16384 ADD8192 ADD8192

__kernel void body(__global const float* start, __global float* out, uint iters, float a) {
  const size_t gid = get_global_id(0);
  const float s = start[gid];
  // Distinct starting values: equal ones would let the compiler see eight
  // identical chains and keep one (value numbering).
  float x0 = s, x1 = s + 1.0f, x2 = s + 2.0f, x3 = s + 3.0f, x4 = s + 4.0f, x5 = s + 5.0f, x6 = s + 6.0f,
        x7 = s + 7.0f;
  for (uint i = 0; i < iters; ++i) {
#if BODY & 64
    ADD64
#endif
#if BODY & 128
    ADD128
#endif
#if BODY & 256
    ADD256
#endif
#if BODY & 512
    ADD512
#endif
#if BODY & 1024
    ADD1024
#endif
#if BODY & 2048
    ADD2048
#endif
#if BODY & 4096
    ADD4096
#endif
#if BODY & 8192
    ADD8192
#endif
#if BODY & 16384
    ADD16384
#endif
  }
  // Sums of exact integers below 2^24 (times powers of two): exact.
  out[gid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
