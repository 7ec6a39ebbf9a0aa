// Memory latency by dependent pointer chase: the twin of opencl/latency.cl
// (same entries, arguments and results; its comments say why the chase is
// shaped so).
//
// Parameters: ADDR_BITS must be 64 (the Vulkan backend reports 64-bit
// addresses; a slot is one uint64_t word); INDEX_CHASE (optional switch):
// chase by index even where the device has buffer device addresses.
//
// With buffer device addresses (HAS_BUFFER_ADDRESS) and no INDEX_CHASE a slot
// holds the absolute address of the next slot and the chase is `p = *p`
// through GL_EXT_buffer_reference, as in OpenCL: the load-to-use latency with
// nothing else on the critical path. Otherwise a slot holds the next slot's
// word index and the chase is `p = slots[p]`, which adds the index's scaling
// and the add of the buffer's base to every hop; entry chase_arith times that
// arithmetic alone so that the probe can subtract it.

#if ADDR_BITS != 64
#error "the Vulkan latency shaders use 64-bit slots"
#endif
#if !defined(INDEX_CHASE)
#define INDEX_CHASE 0
#endif
#define CHASE_BY_ADDRESS (HAS_BUFFER_ADDRESS && !INDEX_CHASE)

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#if CHASE_BY_ADDRESS
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Slot { uint64_t next; };
#endif

#if defined(ENTRY_LINK)

// link(slots, next, stride_words, count): one invocation per slot.
layout(set = 0, binding = 0) restrict writeonly buffer Slots { uint64_t slots[]; };
layout(set = 0, binding = 1) restrict readonly buffer Next { uint next[]; };
layout(push_constant) uniform Args {
  uint stride_words;
  uint count;
#if HAS_BUFFER_ADDRESS
  uint64_t slots_addr;
#endif
} args;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < args.count) {
    const uint target = next[i] * args.stride_words;
#if CHASE_BY_ADDRESS
    slots[i * args.stride_words] = args.slots_addr + 8ul * target;
#else
    slots[i * args.stride_words] = uint64_t(target);
#endif
  }
}

#elif defined(ENTRY_CHASE)

// chase(slots, start, stride_words, rounds, end_slot): one invocation walks
// rounds * 16 hops and writes the slot it ends on.
layout(set = 0, binding = 0) restrict readonly buffer Slots { uint64_t slots[]; };
layout(set = 0, binding = 4) restrict writeonly buffer End { uint end_slot[]; };
layout(push_constant) uniform Args {
  uint start;
  uint stride_words;
  uint rounds;
#if HAS_BUFFER_ADDRESS
  uint64_t slots_addr;
#endif
} args;

#if CHASE_BY_ADDRESS
#define HOP p = Slot(p.next);
#else
#define HOP p = uint(slots[p]);
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
#if CHASE_BY_ADDRESS
  Slot p = Slot(args.slots_addr + 8ul * uint64_t(args.start * args.stride_words));
  WALK(args.rounds)
  end_slot[0] = uint((uint64_t(p) - args.slots_addr) / 8ul) / args.stride_words;
#else
  uint p = args.start * args.stride_words;
  WALK(args.rounds)
  end_slot[0] = p / args.stride_words;
#endif
}

#elif defined(ENTRY_WALK)

// walk(slots, starts, stride_words, rounds, ends): invocation i walks
// rounds * 16 hops from slot starts[i] and writes the slot it ends on to
// ends[i]; one work-group of many chains (the probe's warm-up).
layout(set = 0, binding = 0) restrict readonly buffer Slots { uint64_t slots[]; };
layout(set = 0, binding = 1) restrict readonly buffer Starts { uint starts[]; };
layout(set = 0, binding = 4) restrict writeonly buffer Ends { uint ends[]; };
layout(push_constant) uniform Args {
  uint stride_words;
  uint rounds;
#if HAS_BUFFER_ADDRESS
  uint64_t slots_addr;
#endif
} args;

#if CHASE_BY_ADDRESS
#define HOP p = Slot(p.next);
#else
#define HOP p = uint(slots[p]);
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
  const uint i = gl_GlobalInvocationID.x;
#if CHASE_BY_ADDRESS
  Slot p = Slot(args.slots_addr + 8ul * uint64_t(starts[i] * args.stride_words));
  WALK(args.rounds)
  ends[i] = uint((uint64_t(p) - args.slots_addr) / 8ul) / args.stride_words;
#else
  uint p = starts[i] * args.stride_words;
  WALK(args.rounds)
  ends[i] = p / args.stride_words;
#endif
}

#elif defined(ENTRY_CHASE_ARITH)

// chase_arith(start, scale, rounds, end): the index chase's address
// arithmetic without its load, as a dependent chain of the same length:
// p = low 32 bits of (p * scale + 1), scale a run-time 8 (the slot's bytes),
// so no compiler can fold the chain. Writes where the chain ends; the host
// repeats the recurrence to check it.
layout(set = 0, binding = 3) restrict writeonly buffer End { uint end_value[]; };
layout(push_constant) uniform Args {
  uint start;
  uint scale;
  uint rounds;
} args;

#define HOP p = uint(uint64_t(p) * uint64_t(args.scale) + 1ul);
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4
#define HOP256 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16 HOP16

void main() {
  uint p = args.start;
  uint r = args.rounds;
  for (; r >= 16; r -= 16) {
    HOP256
  }
  for (; r > 0; --r) {
    HOP16
  }
  end_value[0] = p;
}

#endif
