// Dependent pointer chases over layouts the host chooses word by word (the
// TLB probe's page-strided cycles, the geometry probe's pairs, cycles
// replicated per work-group): the twin of opencl/chase_layout.cl.
//
// Parameters: ADDR_BITS must be 64 (a word is one uint64_t); INDEX_CHASE
// (optional switch): chase by index even where device addresses exist.
//
// Every position is a word index into `mem`. With buffer device addresses
// (HAS_BUFFER_ADDRESS) and no INDEX_CHASE a word holds the absolute address of the word it
// points to and the chase is `p = *p`; without them it holds the word index
// and the chase is `p = mem[p]` (latency.comp says what that adds).

#if ADDR_BITS != 64
#error "the Vulkan chase shaders use 64-bit words"
#endif
#if !defined(INDEX_CHASE)
#define INDEX_CHASE 0
#endif
#define CHASE_BY_ADDRESS (HAS_BUFFER_ADDRESS && !INDEX_CHASE)

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#if CHASE_BY_ADDRESS
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Word { uint64_t next; };
#define REF(w) (args.mem_addr + 8ul * uint64_t(w))
#else
#define REF(w) uint64_t(w)
#endif

#if defined(ENTRY_LINK_WORDS)
// link_words(mem, from, to, count): mem[from[i]] = &mem[to[i]].
layout(set = 0, binding = 0) restrict writeonly buffer Mem { uint64_t mem[]; };
layout(set = 0, binding = 1) restrict readonly buffer From { uint from_w[]; };
layout(set = 0, binding = 2) restrict readonly buffer To { uint to_w[]; };
layout(push_constant) uniform Args {
  uint count;
#if HAS_BUFFER_ADDRESS
  uint64_t mem_addr;
#endif
} args;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < args.count) mem[from_w[i]] = REF(to_w[i]);
}

#elif defined(ENTRY_LINK_PAIRS)
// link_pairs(mem, next, anchor_words, pair_words, count)
layout(set = 0, binding = 0) restrict writeonly buffer Mem { uint64_t mem[]; };
layout(set = 0, binding = 1) restrict readonly buffer Next { uint next[]; };
layout(push_constant) uniform Args {
  uint anchor_words;
  uint pair_words;
  uint count;
#if HAS_BUFFER_ADDRESS
  uint64_t mem_addr;
#endif
} args;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < args.count) {
    const uint a = i * args.anchor_words;
    mem[a] = REF(a + args.pair_words);
    mem[a + args.pair_words] = REF(next[i] * args.anchor_words);
  }
}

#elif defined(ENTRY_LINK_REGIONS)
// link_regions(mem, next, stride_words, count, region_words: u64, regions)
layout(set = 0, binding = 0) restrict writeonly buffer Mem { uint64_t mem[]; };
layout(set = 0, binding = 1) restrict readonly buffer Next { uint next[]; };
layout(push_constant) uniform Args {
  uint stride_words;
  uint count;
  uint64_t region_words;
  uint regions;
#if HAS_BUFFER_ADDRESS
  uint64_t mem_addr;
#endif
} args;

void main() {
  const uint id = gl_GlobalInvocationID.x;
  if (id >= args.count * args.regions) return;
  const uint region = id / args.count;
  const uint i = id % args.count;
  const uint base = region * uint(args.region_words);  // buffers are at most 4 GiB: word indices fit
  mem[base + i * args.stride_words] = REF(base + next[i] * args.stride_words);
}

#elif defined(ENTRY_CHASE_GROUPS)
// chase_groups(mem, starts, rounds, ends): invocation 0 of group g walks
// rounds * 16 hops from word starts[g] and writes the word it ends on.
layout(set = 0, binding = 0) restrict readonly buffer Mem { uint64_t mem[]; };
layout(set = 0, binding = 1) restrict readonly buffer Starts { uint starts[]; };
layout(set = 0, binding = 3) restrict writeonly buffer Ends { uint ends[]; };
layout(push_constant) uniform Args {
  uint rounds;
#if HAS_BUFFER_ADDRESS
  uint64_t mem_addr;
#endif
} args;

#if CHASE_BY_ADDRESS
#define HOP p = Word(p.next);
#else
#define HOP p = uint(mem[p]);
#endif
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4
#define HOP256 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16

// 16 rounds per iteration while they last (README.md: lavapipe's loop limit).
#define WALK(rounds)                 \
  uint r = rounds;                   \
  for (; r >= 16; r -= 16) {         \
    HOP256                           \
  }                                  \
  for (; r > 0; --r) {               \
    HOP16                            \
  }

void main() {
  const uint g = gl_WorkGroupID.x;
  if (gl_LocalInvocationIndex != 0) return;
#if CHASE_BY_ADDRESS
  Word p = Word(REF(starts[g]));
  WALK(args.rounds)
  ends[g] = uint((uint64_t(p) - args.mem_addr) / 8ul);
#else
  uint p = starts[g];
  WALK(args.rounds)
  ends[g] = p;
#endif
}
#endif
