// Global-memory bandwidth: read, write and copy (the 000 and 002 articles'
// bandwidth experiments, the STREAM/BabelStream kernels reshaped for caches).
//
// Build options:
//   -DVEC=1|2|4|8|16   elements of uint per access (4 to 64 bytes per load/store)
//   -DUNROLL=n         independent accesses each work-item has in flight per step
//
// Layout shared by all three kernels. The footprint is a window of `n`
// vectors per array. Work-group g walks its own cursor around its window:
// the host gives it an absolute start a_g = r_g + b_g, where r_g < S (the
// step, S = UNROLL * local_size vectors) shifts the group's window to
// [r_g, r_g + n) and b_g < n is the cursor within it. A step reads S
// consecutive vectors from r_g + b_g, so every access is coalesced and each
// work-item has UNROLL independent loads in flight; then b_g advances by S,
// wrapping at n. n and b_g are multiples of S, so a step never straddles the
// wrap and the loads carry no index arithmetic beyond a constant offset; the
// buffers hold S vectors of slack past the largest window.
//
// Why cursors: the host spaces the starts n/W apart (W = number of groups)
// and hands them out in random order. Every byte of the footprint is then
// revisited only after all groups together have moved about n vectors, so
// the reuse distance is the footprint whatever W is and whichever groups
// share a compute unit: a footprint that fits a cache hits in it, one that
// does not streams from the level below, as the latency chase's footprints
// do, and the two curves' steps line up. When a launch's `count` is below
// n/W each byte moves at most once per launch (pure streaming); when above,
// the groups sweep the footprint repeatedly. Each launch continues where
// the previous one stopped.
//
// The host guarantees: n, b_g and `count` are multiples of S; S is a power of two.

#if VEC == 1
typedef uint vec_t;
#define HSUM(v) (v)
#define SPLAT(x) (x)
#elif VEC == 2
typedef uint2 vec_t;
#define HSUM(v) ((v).s0 + (v).s1)
#define SPLAT(x) ((uint2)((x), (x) ^ 0x9e3779b9u))
#elif VEC == 4
typedef uint4 vec_t;
#define HSUM(v) ((v).s0 + (v).s1 + (v).s2 + (v).s3)
#define SPLAT(x) ((uint4)((x), (x) ^ 0x9e3779b9u, (x) ^ 0x7f4a7c15u, (x) ^ 0x85ebca6bu))
#elif VEC == 8
typedef uint8 vec_t;
#define HSUM(v) (HSUM4((v).lo) + HSUM4((v).hi))
#define SPLAT(x) ((uint8)(SPLAT4(x), SPLAT4((x) ^ 0xc2b2ae35u)))
#elif VEC == 16
typedef uint16 vec_t;
#define HSUM(v) (HSUM4((v).lo.lo) + HSUM4((v).lo.hi) + HSUM4((v).hi.lo) + HSUM4((v).hi.hi))
#define SPLAT(x) ((uint16)(SPLAT4(x), SPLAT4((x) ^ 0xc2b2ae35u), SPLAT4((x) ^ 0x27d4eb2fu), SPLAT4((x) ^ 0x165667b1u)))
#else
#error "VEC must be 1, 2, 4, 8 or 16"
#endif
#define HSUM4(v) ((v).s0 + (v).s1 + (v).s2 + (v).s3)
#define SPLAT4(x) ((uint4)((x), (x) ^ 0x9e3779b9u, (x) ^ 0x7f4a7c15u, (x) ^ 0x85ebca6bu))

#ifndef UNROLL
#define UNROLL 4
#endif

// Advances a cursor by one step, wrapping at n. A compare and subtract, not
// a modulo: n need not be a power of two.
inline uint next_step(uint b, uint step, uint n) {
  b += step;
  return b >= n ? b - n : b;
}

// Every work-item sums what it loads (as 32-bit words, wrapping) and stores
// the sum: the host checks that all sums together equal the sum of the
// vectors the launch should have read, so a compiler that dropped or merged
// loads is caught. Integer adds: no rounding, and one add per word is far
// below the load rate.
__kernel void read(__global const vec_t* restrict src, uint n, __global const uint* restrict start,
                   uint count, __global uint* restrict sums) {
  const uint lsz = (uint)get_local_size(0);
  const uint lid = (uint)get_local_id(0);
  const uint step = UNROLL * lsz;
  const uint a = start[get_group_id(0)];
  __global const vec_t* p = src + (a & (step - 1)) + lid;
  uint b = a & ~(step - 1);
  vec_t acc = (vec_t)(0);
  for (uint done = 0; done < count; done += step) {
    vec_t v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) v[k] = p[b + k * lsz];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc += v[k];
    b = next_step(b, step, n);
  }
  sums[get_global_id(0)] = HSUM(acc);
}

// Stores a value the compiler cannot predict (it depends on `seed`, which
// changes every launch, and on the index) mixed so that no two neighbouring
// words are alike: memory compression, where a device has it for plain
// buffers, gets nothing to compress. The host reads back sampled vectors
// and recomputes them.
__kernel void write(__global vec_t* restrict dst, uint n, __global const uint* restrict start, uint count,
                    uint seed) {
  const uint lsz = (uint)get_local_size(0);
  const uint lid = (uint)get_local_id(0);
  const uint step = UNROLL * lsz;
  const uint a = start[get_group_id(0)];
  const uint r = (a & (step - 1)) + lid;
  uint b = a & ~(step - 1);
  for (uint done = 0; done < count; done += step) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const uint i = r + b + k * lsz;
      dst[i] = SPLAT((i * 0x9e3779b1u) ^ seed);
    }
    b = next_step(b, step, n);
  }
}

// dst[i] = src[i] over the same walk; the host compares sampled vectors of
// dst with its own copy of src.
__kernel void copy(__global const vec_t* restrict src, __global vec_t* restrict dst, uint n,
                   __global const uint* restrict start, uint count) {
  const uint lsz = (uint)get_local_size(0);
  const uint lid = (uint)get_local_id(0);
  const uint step = UNROLL * lsz;
  const uint a = start[get_group_id(0)];
  const uint r = (a & (step - 1)) + lid;
  __global const vec_t* p = src + r;
  __global vec_t* q = dst + r;
  uint b = a & ~(step - 1);
  for (uint done = 0; done < count; done += step) {
    vec_t v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) v[k] = p[b + k * lsz];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) q[b + k * lsz] = v[k];
    b = next_step(b, step, n);
  }
}
