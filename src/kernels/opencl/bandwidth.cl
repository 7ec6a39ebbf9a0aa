// Global-memory bandwidth: read, write and copy (the Mali-G52 and Adreno 530 articles'
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

// ---------------------------------------------------------------------------
// Streaming (grid-stride, STREAM/BabelStream) layout, measured only at the
// largest footprint, where DRAM serves it: the per-group cursors above give
// each of the ~1000 groups its own window n/W apart, i.e. ~1000 separate
// address streams, each writing its own 16 KiB stretch per step. Here every
// step of the whole grid covers one contiguous stretch of UNROLL x G vectors
// (G = global size): access k of work-item `gid` is vector b + k * G + gid,
// so each of the UNROLL accesses of a step is one stretch of G vectors
// (4 MiB for 1056 groups of 256 x uint4) that all groups fill together, and
// the DRAM pages and L2 lines a step touches are written whole by
// neighbouring warps at about the same time. With uint4, a warp's access is
// 512 contiguous bytes: four whole 128-byte lines per store instruction
// (uint8/uint16 accesses make each instruction cover only part of every
// line; the series shows what that costs).
//
// A launch walks `count` vectors (a multiple of the step UNROLL * G) from
// vector `first` (a multiple of the step), wrapping at n (a multiple of the
// step): the host keeps `first` across launches, so each launch continues
// where the last stopped and a launch never revisits a vector unless it is
// longer than the footprint. Checks as for the cursor kernels: sums of all
// loads; hashed stores and copies read back at sampled spots.
__kernel void read_stream(__global const vec_t* restrict src, uint n, uint first, uint count,
                          __global uint* restrict sums) {
  const uint g = (uint)get_global_size(0);
  const uint step = UNROLL * g;
  __global const vec_t* p = src + get_global_id(0);
  uint b = first;
  vec_t acc = (vec_t)(0);
  for (uint done = 0; done < count; done += step) {
    vec_t v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) v[k] = p[b + k * g];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc += v[k];
    b = next_step(b, step, n);
  }
  sums[get_global_id(0)] = HSUM(acc);
}

// The same hash as `write` (so the host's check is shared): one integer
// multiply and VEC xors per vector. Cost, by arithmetic, on the H200: 4 TB/s
// of uint4 stores is 0.25 G vectors/ms, ~8 integer ops each (multiply, xors,
// address) = 2 T ops/s, against 132 SMs x 1.98 GHz x 64 lanes = 16.7 T
// int ops/s: ~12% of the issue rate, not what limits the store stream.
__kernel void write_stream(__global vec_t* restrict dst, uint n, uint first, uint count, uint seed) {
  const uint g = (uint)get_global_size(0);
  const uint step = UNROLL * g;
  const uint gid = (uint)get_global_id(0);
  uint b = first;
  for (uint done = 0; done < count; done += step) {
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const uint i = b + k * g + gid;
      dst[i] = SPLAT((i * 0x9e3779b1u) ^ seed);
    }
    b = next_step(b, step, n);
  }
}

__kernel void copy_stream(__global const vec_t* restrict src, __global vec_t* restrict dst, uint n, uint first,
                          uint count) {
  const uint g = (uint)get_global_size(0);
  const uint step = UNROLL * g;
  const uint gid = (uint)get_global_id(0);
  __global const vec_t* p = src + gid;
  __global vec_t* q = dst + gid;
  uint b = first;
  for (uint done = 0; done < count; done += step) {
    vec_t v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) v[k] = p[b + k * g];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) q[b + k * g] = v[k];
    b = next_step(b, step, n);
  }
}

// ---------------------------------------------------------------------------
// Whole-grid layout for stores: one vector per work-item, no loop, a grid as
// large as the launch's walk (the classic STREAM/memset grid). Work-groups
// start in order of their id and a new one starts only when a resident one
// ends, so the stores' front is one compact window (the resident groups'
// few MB) that moves through the footprint in address order; in the
// grid-stride layout the persistent groups drift apart over their many
// steps and the front spreads. A launch writes vectors [first, first + G)
// mod n (G = global size <= n, first < n: one subtract wraps it). Values and
// checks as for `write` / `copy`.
__kernel void write_grid(__global vec_t* restrict dst, uint n, uint first, uint seed) {
  uint i = first + (uint)get_global_id(0);
  i = i >= n ? i - n : i;
  dst[i] = SPLAT((i * 0x9e3779b1u) ^ seed);
}

__kernel void copy_grid(__global const vec_t* restrict src, __global vec_t* restrict dst, uint n, uint first) {
  uint i = first + (uint)get_global_id(0);
  i = i >= n ? i - n : i;
  dst[i] = src[i];
}
