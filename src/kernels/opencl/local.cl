// Local (shared) memory: latency by dependent chase, bandwidth, the largest
// allocation that works, and the same chase and reads from global memory as
// the reference that says whether local memory is on-chip storage or
// ordinary memory behind the load/store cache (the Mali-G52 article found the
// latter on Mali Bifrost).
//
// Build options:
//   -DVEC=1|2|4   uint words per access (4, 8, 16 bytes) for the read kernels
//   -DWG=n        the work-group size the read kernels are launched with
//   -DM=n         vectors each work-item reads per round; the window is
//                 N = M * WG vectors
//
// The chase kernels need neither.

#ifndef VEC
#define VEC 1
#endif
#if VEC == 1
typedef uint vec_t;
#define HSUM(v) (v)
#elif VEC == 2
typedef uint2 vec_t;
#define HSUM(v) ((v).s0 + (v).s1)
#elif VEC == 4
typedef uint4 vec_t;
#define HSUM(v) ((v).s0 + (v).s1 + (v).s2 + (v).s3)
#else
#error "VEC must be 1, 2 or 4"
#endif

#define HOP p = *(__local const uint*)((__local const uchar*)l + p);
#define GHOP p = *(__global const uint*)((__global const uchar*)g + p);
#define X16(h) h h h h h h h h h h h h h h h h

// One work-item copies the cycle (byte offsets of the next slot) into local
// memory and walks it: p = *(l + p), 16 hops per round. Byte offsets, not
// indices, so that the address of each load is the previous load's value
// plus the array's base, as in the global chase below: the two differ only
// in which memory the load goes to. The final offset is written out for the
// host to check against its own walk.
__kernel void local_chase(__global const uint* restrict next, uint n, uint rounds, __global uint* restrict end,
                          __local uint* l) {
  for (uint i = 0; i < n; ++i) l[i] = next[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint p = 0;
  for (uint r = 0; r < rounds; ++r) {
    X16(HOP)
  }
  end[0] = p;
}

// The same walk over the same cycle in global memory (small enough to stay
// in the first cache the load path has).
__kernel void global_chase(__global const uint* restrict g, uint rounds, __global uint* restrict end) {
  uint p = 0;
  for (uint r = 0; r < rounds; ++r) {
    X16(GHOP)
  }
  end[0] = p;
}

#if defined(WG) && defined(M)
#define N (M * WG)

// Each group copies N vectors from `src` twice into a 2N-vector local window
// (so that a round can start anywhere in the first N without wrapping), then
// every work-item reads M vectors WG apart per round: neighbouring work-items
// read neighbouring vectors (no bank conflicts on a banked memory), each
// load's address is a constant offset from a per-round base, and the base
// moves by `stride` (= WG, passed at run time) vectors every round. Moving
// it matters, and so does the compiler not knowing by how much: with the
// stride a constant, the bases repeat every M rounds, and a compiler that
// unrolls M rounds sees the same loads every M rounds and hoists them out
// of the loop (seen on NVIDIA with M = 2 and 4: 125 TB/s "read" on an H200).
// A round reads every vector of the window exactly once, so the work-items'
// sums add up to groups * rounds * (sum of the N source vectors), which the
// host checks.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void local_read(__global const vec_t* restrict src,
                                                                           uint rounds, uint stride,
                                                                           __global uint* restrict sums,
                                                                           __local vec_t* lmem) {
  const uint lid = (uint)get_local_id(0);
  for (uint i = lid; i < 2 * N; i += WG) lmem[i] = src[i % N];
  barrier(CLK_LOCAL_MEM_FENCE);
  vec_t acc = (vec_t)(0);
  for (uint r = 0; r < rounds; ++r) {
    __local const vec_t* p = lmem + ((r * stride) % N) + lid;
#pragma unroll
    for (int m = 0; m < M; ++m) acc += p[m * WG];
  }
  sums[get_global_id(0)] = HSUM(acc);
}

// The same reads from a 2N-vector global buffer holding the window (the
// host writes it twice over): the cached global path at the same footprint.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void global_read(__global const vec_t* restrict win,
                                                                            uint rounds, uint stride,
                                                                            __global uint* restrict sums) {
  const uint lid = (uint)get_local_id(0);
  vec_t acc = (vec_t)(0);
  for (uint r = 0; r < rounds; ++r) {
    __global const vec_t* p = win + ((r * stride) % N) + lid;
#pragma unroll
    for (int m = 0; m < M; ++m) acc += p[m * WG];
  }
  sums[get_global_id(0)] = HSUM(acc);
}
#endif

// Allocation test: fills all `words` of the local buffer, then reads them
// back in another work-item's order and sums; the host checks the sum, so
// an allocation that launched but does not hold its contents is caught.
__kernel void local_touch(uint words, __global uint* restrict sums, __local uint* l) {
  const uint lid = (uint)get_local_id(0);
  const uint lsz = (uint)get_local_size(0);
  for (uint i = lid; i < words; i += lsz) l[i] = i * 0x9e3779b1u;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint s = 0;
  for (uint i = lsz - 1 - lid; i < words; i += lsz) s += l[i];
  sums[get_global_id(0)] = s;
}
