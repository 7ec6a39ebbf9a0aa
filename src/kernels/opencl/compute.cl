// Arithmetic throughput (tp_<op>) and dependent-chain latency (lat_<op>) of
// one element type, the experiments of the Mali-G52 and Adreno 530 articles
// (rates per type and op) and of the Adreno 320/420 paper's Tables 2 and 3
// (latency of + - * /).
//
// Build options (one program per type, vector form and op set; the OpenCL
// backend spells the kernel's parameters so, opencl_kernel_source.hpp):
//   -DSCALAR=float -DSCALAR_IS_F32=1   the element type, the type of the
//                      seed/param/out buffers
//   -DVEC=4            lanes of the chain's type ELEM (1, 2, 4, 8, 16)
//   -DKIND_FLOAT=1 | -DKIND_INT=1 | -DKIND_PTX_F16X2=1
//                      which op set: OpenCL C float builtins (float, double,
//                      half), integer ops, or NVIDIA PTX packed-half
//                      instructions through inline asm (SCALAR=uint holding
//                      two halves) where the driver has no cl_khr_fp16
//   -DHAS_PTX=1|0      NVIDIA: inline PTX is accepted (%clock64, dp4a)
//   -DCHAINS=8         independent chains per work-item in tp_ kernels
//   -DUNROLL=32        steps per chain per loop trip in tp_ kernels
//   -DLAT_UNROLL=64    steps per loop trip in lat_ kernels
//   -DUNROLL_SLOW=4 -DLAT_UNROLL_SLOW=16   the same for slow ops (see SLOW_KERNELS)
//   -DOPS_<OP>=1 | -DOPS_FAST=1 | -DOPS_ALL=1   which ops' kernels the program holds
//
// Shape of every kernel, and why:
// - Each chain is a pair (x, y) updated as x = g(y); y = g(x): two ops per
//   step, each consuming the previous one's result, so a chain is one
//   dependent sequence. tp_ kernels run CHAINS such chains interleaved, so
//   the hardware always has CHAINS independent ops to issue per work-item and
//   latency does not cap throughput; lat_ kernels run one chain in one
//   work-item, so time per op is the op's latency.
// - g's operands a and b come from a buffer and the seeds differ per
//   work-item, chain and lane: the compiler cannot see any value, so it can
//   neither fold a step nor prove two lanes equal (a splat vector would let it
//   compute one lane and broadcast).
// - Float maps are ones IEEE arithmetic cannot simplify (a - (a - x) != x,
//   no reassociation without -cl-fast-relaxed-math), bounded so long chains
//   never reach inf, NaN or denormals: a rotation for add, multiply by a then
//   b with a*b ~ 1 for mul, contractions for fma/mad/sqrt/rsqrt/exp/log/sin,
//   x -> a/x (period two up to b/a) for div. Integer maps are ones integer
//   algebra cannot simplify either: Fibonacci pairs for add (the rotation
//   would fold to -x in integers), products of odd numbers for mul (never
//   zero), affine maps for mad.
// - The iteration count is a kernel argument, so the same binary runs a
//   short launch the host checks lane by lane against its own evaluation of
//   the maps and the long timed launches; every chain's final state is
//   stored, so none of the work is dead.
// - Loop overhead (counter, compare, branch) takes issue slots: tp_ kernels
//   unroll CHAINS x UNROLL x 2 ops per trip (512 at 8 x 32) so that it is
//   below 1% of the instructions.

#if SCALAR_IS_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if SCALAR_IS_F16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if VEC == 1
#define ELEM SCALAR
#else
#define ELEM CAT(SCALAR, VEC)
#endif

#if VEC == 1
#define LOAD(i, p) ((p)[i])
#define STORE(v, i, p) ((p)[i] = (v))
#else
#define LOAD(i, p) CAT(vload, VEC)((i), (p))
#define STORE(v, i, p) CAT(vstore, VEC)((v), (i), (p))
#endif

#ifndef CHAINS
#define CHAINS 8
#endif
#ifndef UNROLL
#define UNROLL 32
#endif
#ifndef LAT_UNROLL
#define LAT_UNROLL 64
#endif
#ifndef UNROLL_SLOW
#define UNROLL_SLOW 4
#endif
#ifndef LAT_UNROLL_SLOW
#define LAT_UNROLL_SLOW 16
#endif

// Device cycle counter where one can be read (NVIDIA: %clock64, the SM's
// own clock), so latency in cycles need not assume a clock.
#if HAS_PTX
ulong cycle_counter(void) {
  ulong t;
  __asm__ __volatile__("mov.u64 %0, %%clock64;" : "=l"(t));
  return t;
}
#else
ulong cycle_counter(void) { return 0; }
#endif

// ---------------------------------------------------------------- op steps
// STEP_<OP>(x, y, a, b): one step of one chain, two counted ops (x and y).
// Op names are upper case here and in kernel names (tp_FMA, lat_NATIVE_SIN)
// because the lower-case ones are builtins, which some compilers (PoCL)
// define as macros that would expand inside the token pasting.

#if defined(KIND_FLOAT)
// Rotation by 60 degrees: (x, y) -> (x + y, -x); period 6, bounded.
#define STEP_ADD(x, y, a, b) \
  x = x + y;                 \
  y = y - x;
// a * b ~ 1 (the host picks them), so the magnitude drifts slowly.
#define STEP_MUL(x, y, a, b) \
  x = y * a;                 \
  y = x * b;
// |a| < 1: contracts towards b / (1 - a).
#define STEP_FMA(x, y, a, b) \
  x = fma(y, a, b);          \
  y = fma(x, a, b);
#define STEP_MAD(x, y, a, b) \
  x = mad(y, a, b);          \
  y = mad(x, a, b);
// Throughput form of the same maps: x and y as two independent chains
// (x = fma(x, a, b)), each DFMA's accumulator its own destination. Paired or
// not matters less than where a and b live (THROUGHPUT_KERNEL_BYVAL): the
// CUDA single-variable kernel that read 33.2 TFLOP/s on the H200 had `a` in
// a uniform register, the paired one (30.6) and the 16-chain one (30.4) did
// not.
#define TP_STEP_FMA(x, y, a, b) \
  x = fma(x, a, b);             \
  y = fma(y, a, b);
#define TP_STEP_MAD(x, y, a, b) \
  x = mad(x, a, b);             \
  y = mad(y, a, b);
// y -> (b/a) y per step; b/a ~ 1.
#define STEP_DIV(x, y, a, b) \
  x = a / y;                 \
  y = b / x;
// Contract towards 1 (rsqrt alternates about it).
#define STEP_SQRT(x, y, a, b) \
  x = sqrt(y);                \
  y = sqrt(x);
#define STEP_RSQRT(x, y, a, b) \
  x = rsqrt(y);                \
  y = rsqrt(x);
// exp(-v) contracts to 0.567 (negation is free on GPUs: a source modifier).
#define STEP_EXP(x, y, a, b) \
  x = exp(-y);               \
  y = exp(-x);
// log(a v) with a ~ 10 contracts to 3.6; the multiply is one cheap op beside
// the log (log(v) alone would run to -inf).
#define STEP_LOG(x, y, a, b) \
  x = log(y * a);            \
  y = log(x * a);
// sin contracts (slowly) towards 0 and stays normal for any practical length.
#define STEP_SIN(x, y, a, b) \
  x = sin(y);                \
  y = sin(x);
#if !SCALAR_IS_F64
#define STEP_NATIVE_DIVIDE(x, y, a, b) \
  x = native_divide(a, y);             \
  y = native_divide(b, x);
#define STEP_NATIVE_SQRT(x, y, a, b) \
  x = native_sqrt(y);                \
  y = native_sqrt(x);
#define STEP_NATIVE_RSQRT(x, y, a, b) \
  x = native_rsqrt(y);                \
  y = native_rsqrt(x);
#define STEP_NATIVE_EXP(x, y, a, b) \
  x = native_exp(-y);               \
  y = native_exp(-x);
#define STEP_NATIVE_LOG(x, y, a, b) \
  x = native_log(y * a);            \
  y = native_log(x * a);
#define STEP_NATIVE_SIN(x, y, a, b) \
  x = native_sin(y);                \
  y = native_sin(x);
#endif
#endif  // KIND_FLOAT

#if defined(KIND_PTX_F16X2)
// Two halves per 32-bit register, one PTX instruction per packed op: the
// path NVIDIA's OpenCL leaves when it does not offer cl_khr_fp16. asm without
// `volatile`: the compiler may schedule it, but cannot see through it.
uint hadd2(uint p, uint q) {
  uint r;
  __asm__("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q));
  return r;
}
uint hsub2(uint p, uint q) {
  uint r;
  __asm__("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q));
  return r;
}
uint hmul2(uint p, uint q) {
  uint r;
  __asm__("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q));
  return r;
}
uint hfma2(uint p, uint q, uint s) {
  uint r;
  __asm__("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(p), "r"(q), "r"(s));
  return r;
}
#define STEP_ADD(x, y, a, b) \
  x = hadd2(x, y);           \
  y = hsub2(y, x);
#define STEP_MUL(x, y, a, b) \
  x = hmul2(y, a);           \
  y = hmul2(x, b);
#define STEP_FMA(x, y, a, b) \
  x = hfma2(y, a, b);        \
  y = hfma2(x, a, b);
#endif  // KIND_PTX_F16X2

#if defined(KIND_INT)
// Fibonacci pairs modulo 2^n: nothing to fold, exact on the host.
#define STEP_ADD(x, y, a, b) \
  x = x + y;                 \
  y = y + x;
// Odd times odd stays odd: the chain never collapses to 0.
#define STEP_MUL(x, y, a, b) \
  x = x * y;                 \
  y = y * x;
#define STEP_MAD(x, y, a, b) \
  x = y * a + b;             \
  y = x * a + b;
// a / v with v forced odd (never 0): settles into a period-two orbit; the OR
// is one cheap op beside a division that is a long sequence on most GPUs.
#define STEP_DIV(x, y, a, b) \
  x = a / (y | (ELEM)1);     \
  y = a / (x | (ELEM)1);
#if VEC == 1 && defined(SCALAR_IS_I32)
// int -> float -> int: two conversions per map; the multiply by a float the
// host sets to 1.0 stops the compiler from folding the round trip (exact for
// the |v| < 2^24 it would otherwise have to prove).
#define STEP_CVT(x, y, a, b)                                   \
  x = convert_int_rtz(convert_float(y) * as_float((uint)a)); \
  y = convert_int_rtz(convert_float(x) * as_float((uint)a));
#endif
#if VEC == 1 && defined(SCALAR_IS_I32) && HAS_PTX
// Four int8 products summed into an int32 (dp4a, sm_61+): v's bytes times a's.
int dp4a(int p, int q, int s) {
  int r;
  __asm__("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(p), "r"(q), "r"(s));
  return r;
}
#define STEP_DP4A(x, y, a, b) \
  x = dp4a(y, a, b);          \
  y = dp4a(x, a, b);
#endif
#if API_DOT && !HAS_PTX
#error "compute: the API's integer dot product (cl_khr_integer_dot_product) has no OpenCL C kernel here"
#endif
#endif  // KIND_INT

// ---------------------------------------------------------------- kernels
// seed: 2 * CHAINS elements of ELEM per work-item (x then y of each chain);
// param: a, b; out: the final x, y of every chain, same layout as seed.
#define THROUGHPUT_KERNEL(OP, STEPS, STEP)                                                            \
  __kernel void tp_##OP(__global const SCALAR* seed, __global const SCALAR* param, __global SCALAR* out, \
                        uint iters) {                                                                 \
    const size_t base = get_global_id(0) * 2 * CHAINS;                                                \
    const ELEM a = (ELEM)(param[0]);                                                                  \
    const ELEM b = (ELEM)(param[1]);                                                                  \
    ELEM x[CHAINS], y[CHAINS];                                                                        \
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {                                              \
      x[c] = LOAD(base + 2 * c, seed);                                                                \
      y[c] = LOAD(base + 2 * c + 1, seed);                                                            \
    }                                                                                                 \
    for (uint i = 0; i < iters; ++i) {                                                                \
      _Pragma("unroll") for (int u = 0; u < STEPS; ++u) {                                             \
        _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) { STEP(x[c], y[c], a, b) }                \
      }                                                                                               \
    }                                                                                                 \
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {                                              \
      STORE(x[c], base + 2 * c, out);                                                                 \
      STORE(y[c], base + 2 * c + 1, out);                                                             \
    }                                                                                                 \
  }

// The FMA/MAD throughput kernels take a and b by value (pa, pb: float, or
// double for fp64; `param` holds the same values and is not read). Why, from
// the H200's SASS (README, "Arithmetic"): a kernel argument lives in the
// constant bank, so ptxas keeps `a` in a uniform register and every DFMA
// reads one vector register pair (the accumulator) plus `b` through the
// operand-reuse cache: DFMA R4, R4, UR6, R28.reuse. Loaded from a buffer, a
// and b sit in vector registers unless ptxas happens to move `a` to a uniform
// one (it does for some chain counts, not others); then the DFMA that ptxas
// leaves without reuse flags (one in six) reads three register pairs and
// loses a cycle: 12 of 13 cycles busy, the 92% of peak (30.7 of 33.45
// TFLOP/s) the buffer form read. The values still arrive at run time, so
// nothing can be folded.
#define THROUGHPUT_KERNEL_BYVAL(OP, STEPS, STEP)                                                      \
  __kernel void tp_##OP(__global const SCALAR* seed, __global const SCALAR* param, __global SCALAR* out, \
                        uint iters, ARG_SCALAR pa, ARG_SCALAR pb) {                                   \
    const size_t base = get_global_id(0) * 2 * CHAINS;                                                \
    const ELEM a = (ELEM)((SCALAR)pa);                                                                \
    const ELEM b = (ELEM)((SCALAR)pb);                                                                \
    ELEM x[CHAINS], y[CHAINS];                                                                        \
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {                                              \
      x[c] = LOAD(base + 2 * c, seed);                                                                \
      y[c] = LOAD(base + 2 * c + 1, seed);                                                            \
    }                                                                                                 \
    for (uint i = 0; i < iters; ++i) {                                                                \
      _Pragma("unroll") for (int u = 0; u < STEPS; ++u) {                                             \
        _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) { STEP(x[c], y[c], a, b) }                \
      }                                                                                               \
    }                                                                                                 \
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {                                              \
      STORE(x[c], base + 2 * c, out);                                                                 \
      STORE(y[c], base + 2 * c + 1, out);                                                             \
    }                                                                                                 \
  }

#if SCALAR_IS_F64
#define ARG_SCALAR double
#else
#define ARG_SCALAR float
#endif

// One work-item, one chain: seed[0..1] -> out[0..1]; cycles[0] = device
// cycles spent in the loop where a counter exists (else 0).
#define LATENCY_KERNEL(OP, STEPS)                                                                      \
  __kernel void lat_##OP(__global const SCALAR* seed, __global const SCALAR* param, __global SCALAR* out, \
                         __global ulong* cycles, uint iters) {                                         \
    const ELEM a = (ELEM)(param[0]);                                                                   \
    const ELEM b = (ELEM)(param[1]);                                                                   \
    ELEM x = LOAD(0, seed);                                                                            \
    ELEM y = LOAD(1, seed);                                                                            \
    const ulong t0 = cycle_counter();                                                                  \
    for (uint i = 0; i < iters; ++i) {                                                                 \
      _Pragma("unroll") for (int u = 0; u < STEPS; ++u) { STEP_##OP(x, y, a, b) }                    \
    }                                                                                                  \
    const ulong t1 = cycle_counter();                                                                  \
    STORE(x, 0, out);                                                                                  \
    STORE(y, 1, out);                                                                                  \
    cycles[0] = t1 - t0;                                                                               \
  }

// Slow ops (division, square roots, transcendentals: a special-function
// unit or a long sequence) are unrolled less: their loop overhead is already
// negligible, and fully unrolled precise sin/exp bodies would take the driver
// seconds to compile. The host's op table marks the same ops slow.
#if VEC == 1
#define KERNELS(OP) THROUGHPUT_KERNEL(OP, UNROLL, STEP_##OP) LATENCY_KERNEL(OP, LAT_UNROLL)
#define INDEP_KERNELS(OP) THROUGHPUT_KERNEL_BYVAL(OP, UNROLL, TP_STEP_##OP) LATENCY_KERNEL(OP, LAT_UNROLL)
#define SLOW_KERNELS(OP) THROUGHPUT_KERNEL(OP, UNROLL_SLOW, STEP_##OP) LATENCY_KERNEL(OP, LAT_UNROLL_SLOW)
#else
// Vector forms of slow ops are not timed (a vector sin is its lanes' sins):
// left out so that the vector programs build fast.
#define KERNELS(OP) THROUGHPUT_KERNEL(OP, UNROLL, STEP_##OP)
#define INDEP_KERNELS(OP) THROUGHPUT_KERNEL_BYVAL(OP, UNROLL, TP_STEP_##OP)
#define SLOW_KERNELS(OP)
#endif

// The op set of each kind. The host builds one program per slow op
// (-DOPS_SIN) and one for the fast ones (add, mul, fma, mad and the mixes:
// -DOPS_FAST): a driver then compiles only what a run times (a build costs
// ~0.3 s on the H200 however small), and a run cut short by its time budget
// has not paid for the ops it skips. -DOPS_ALL builds them all.
#if defined(KIND_FLOAT)
#if defined(OPS_ADD) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(ADD)
#endif
#if defined(OPS_MUL) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(MUL)
#endif
#if defined(OPS_FMA) || defined(OPS_ALL) || defined(OPS_FAST)
INDEP_KERNELS(FMA)
#endif
#if defined(OPS_MAD) || defined(OPS_ALL) || defined(OPS_FAST)
INDEP_KERNELS(MAD)
#endif
#if defined(OPS_DIV) || defined(OPS_ALL)
SLOW_KERNELS(DIV)
#endif
#if defined(OPS_SQRT) || defined(OPS_ALL)
SLOW_KERNELS(SQRT)
#endif
#if defined(OPS_RSQRT) || defined(OPS_ALL)
SLOW_KERNELS(RSQRT)
#endif
#if defined(OPS_EXP) || defined(OPS_ALL)
SLOW_KERNELS(EXP)
#endif
#if defined(OPS_LOG) || defined(OPS_ALL)
SLOW_KERNELS(LOG)
#endif
#if defined(OPS_SIN) || defined(OPS_ALL)
SLOW_KERNELS(SIN)
#endif
#if !SCALAR_IS_F64
#if defined(OPS_NATIVE_DIVIDE) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_DIVIDE)
#endif
#if defined(OPS_NATIVE_SQRT) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_SQRT)
#endif
#if defined(OPS_NATIVE_RSQRT) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_RSQRT)
#endif
#if defined(OPS_NATIVE_EXP) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_EXP)
#endif
#if defined(OPS_NATIVE_LOG) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_LOG)
#endif
#if defined(OPS_NATIVE_SIN) || defined(OPS_ALL)
SLOW_KERNELS(NATIVE_SIN)
#endif
#endif
#endif

#if defined(KIND_PTX_F16X2)
#if defined(OPS_ADD) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(ADD)
#endif
#if defined(OPS_MUL) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(MUL)
#endif
#if defined(OPS_FMA) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(FMA)
#endif
#endif

#if defined(KIND_INT)
#if defined(OPS_ADD) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(ADD)
#endif
#if defined(OPS_MUL) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(MUL)
#endif
#if defined(OPS_MAD) || defined(OPS_ALL) || defined(OPS_FAST)
KERNELS(MAD)
#endif
#if defined(OPS_DIV) || defined(OPS_ALL)
SLOW_KERNELS(DIV)
#endif
#ifdef STEP_CVT
#if defined(OPS_CVT) || defined(OPS_ALL)
KERNELS(CVT)
#endif
#endif
#ifdef STEP_DP4A
#if defined(OPS_DP4A) || defined(OPS_ALL)
KERNELS(DP4A)
#endif
#endif
#endif

// Dual issue (the Mali-G52 article: Bifrost issues an FMA and an ADD in one instruction):
// even chains run fma, odd chains add, in the same instruction stream. If
// the mix retires more ops per second than either op alone, two pipes issue
// together. Built with the fp32 scalar program only.
#if defined(KIND_FLOAT) && VEC == 1 && defined(SCALAR_IS_F32) && (defined(OPS_MIX_FMA_ADD) || defined(OPS_ALL) || defined(OPS_FAST))
__kernel void tp_MIX_FMA_ADD(__global const SCALAR* seed, __global const SCALAR* param, __global SCALAR* out,
                             uint iters) {
  const size_t base = get_global_id(0) * 2 * CHAINS;
  const ELEM a = param[0];
  const ELEM b = param[1];
  ELEM x[CHAINS], y[CHAINS];
  _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {
    x[c] = seed[base + 2 * c];
    y[c] = seed[base + 2 * c + 1];
  }
  for (uint i = 0; i < iters; ++i) {
    _Pragma("unroll") for (int u = 0; u < UNROLL; ++u) {
      _Pragma("unroll") for (int c = 0; c < CHAINS; c += 2) {
        STEP_FMA(x[c], y[c], a, b) STEP_ADD(x[c + 1], y[c + 1], a, b)
      }
    }
  }
  _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) {
    out[base + 2 * c] = x[c];
    out[base + 2 * c + 1] = y[c];
  }
}

#endif

#if defined(KIND_FLOAT) && VEC == 1 && defined(SCALAR_IS_F32) && (defined(OPS_MIX_FMA_IADD) || defined(OPS_ALL) || defined(OPS_FAST))
// fp32 fma beside int32 adds (separate pipes on many GPUs). The int chains
// live in the same float buffers as bit patterns.
__kernel void tp_MIX_FMA_IADD(__global const SCALAR* seed, __global const SCALAR* param, __global SCALAR* out,
                              uint iters) {
  const size_t base = get_global_id(0) * 2 * CHAINS;
  const float a = param[0];
  const float b = param[1];
  float x[CHAINS / 2], y[CHAINS / 2];
  int p[CHAINS / 2], q[CHAINS / 2];
  _Pragma("unroll") for (int c = 0; c < CHAINS / 2; ++c) {
    x[c] = seed[base + 4 * c];
    y[c] = seed[base + 4 * c + 1];
    p[c] = as_int(seed[base + 4 * c + 2]);
    q[c] = as_int(seed[base + 4 * c + 3]);
  }
  for (uint i = 0; i < iters; ++i) {
    _Pragma("unroll") for (int u = 0; u < UNROLL; ++u) {
      _Pragma("unroll") for (int c = 0; c < CHAINS / 2; ++c) {
        x[c] = fma(y[c], a, b);
        y[c] = fma(x[c], a, b);
        p[c] = p[c] + q[c];
        q[c] = q[c] + p[c];
      }
    }
  }
  _Pragma("unroll") for (int c = 0; c < CHAINS / 2; ++c) {
    out[base + 4 * c] = x[c];
    out[base + 4 * c + 1] = y[c];
    out[base + 4 * c + 2] = as_float(p[c]);
    out[base + 4 * c + 3] = as_float(q[c]);
  }
}
#endif
