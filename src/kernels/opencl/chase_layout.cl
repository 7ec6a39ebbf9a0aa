// Dependent pointer chases over layouts the host chooses word by word: the
// TLB probe's page-strided cycles, the geometry probe's pairs of loads a set
// distance apart, and cycles replicated into one region per work-group.
//
// Build options:
//   -DADDR_BITS=32|64  width of a device pointer (CL_DEVICE_ADDRESS_BITS)
//   -DINDEX_CHASE=1    (optional) words hold word indices and the chase is
//                      `p = mem[p]` (latency.cl says why)
//
// Every position is a word index into `mem` (a word is one addr_t). The
// chase itself is latency.cl's `p = *p`: each load's address is the previous
// load's value, so the time per hop is the load-to-use latency of whatever
// the layout makes that load hit or miss (cache line, sector, TLB entry).

#if ADDR_BITS == 64
typedef ulong addr_t;
#else
typedef uint addr_t;
#endif
#ifndef INDEX_CHASE
#define INDEX_CHASE 0
#endif
// REF(base, w): what a word holds to point at word w of the array at base.
#if INDEX_CHASE
#define REF(base, w) (addr_t)(((base) - mem) + (w))
#else
#define REF(base, w) (addr_t)((base) + (w))
#endif

// mem[from[i]] = address of mem[to[i]], for i < count.
__kernel void link_words(__global addr_t* mem, __global const uint* from, __global const uint* to,
                         uint count) {
  const uint i = (uint)get_global_id(0);
  if (i < count) mem[from[i]] = REF(mem, to[i]);
}

// Pairs: anchor i lives at word i * anchor_words; its word points to the
// word pair_words further on, which points to the next anchor on the cycle
// `next`. A hop pair is then two dependent loads pair_words apart, and the
// second one hits only when the first one brought its bytes in.
__kernel void link_pairs(__global addr_t* mem, __global const uint* next, uint anchor_words,
                         uint pair_words, uint count) {
  const uint i = (uint)get_global_id(0);
  if (i < count) {
    __global addr_t* a = mem + (size_t)i * anchor_words;
    a[0] = REF(a, pair_words);
    a[pair_words] = REF(mem, (size_t)next[i] * anchor_words);
  }
}

// The cycle `next` over `count` slots stride_words apart, copied into
// `regions` regions region_words apart, each region a closed cycle of its
// own (one work-item per slot per region).
__kernel void link_regions(__global addr_t* mem, __global const uint* next, uint stride_words,
                           uint count, ulong region_words, uint regions) {
  const size_t id = get_global_id(0);
  if (id >= (size_t)count * regions) return;
  const size_t region = id / count;
  const size_t i = id % count;
  __global addr_t* base = mem + region * region_words;
  base[i * stride_words] = REF(base, (size_t)next[i] * stride_words);
}

#if INDEX_CHASE
#define HOP p = (uint)mem[p];
#else
#define HOP p = (__global const addr_t*)(*p);
#endif
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4

// Work-item 0 of work-group g walks rounds * 16 hops from word starts[g] and
// writes the word it ends on to ends[g], which the host checks against its
// own walk. Launched with one work-item per group: with as many groups as
// compute units, the driver spreads them one per unit, each chasing its own
// region at the same time (the sharing experiment); with one group it is the
// plain single-thread chase.
__kernel void chase_groups(__global const addr_t* mem, __global const uint* starts, uint rounds,
                           __global uint* ends) {
  const size_t g = get_group_id(0);
  if (get_local_id(0) != 0) return;
#if INDEX_CHASE
  uint p = starts[g];
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  ends[g] = p;
#else
  __global const addr_t* p = mem + starts[g];
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  ends[g] = (uint)(p - mem);
#endif
}
