// Atomic operation latency and throughput: the twin of opencl/atomics.cl,
// which says why every spin is capped (`spin_cap` failed attempts per
// invocation in all): Vulkan promises no forward progress between
// work-groups or between the invocations of one either.
//
// Parameters: USE_64, 64-bit counters (GL_EXT_shader_atomic_int64: the
// device's shaderBufferInt64Atomics, and shaderSharedInt64Atomics for the
// ping-pong in shared memory).
//
// Arguments: ping_pong_global(counter, rounds, spin_cap, result),
// ping_pong_local(rounds, partner, spin_cap, result) with the counter in
// the work-group's local memory (LaunchShape::local_bytes, 8 bytes),
// add_throughput(words, iters, contended).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#if USE_64
#extension GL_EXT_shader_atomic_int64 : require
#define count_t uint64_t
#else
#define count_t uint
#endif

// Two players take turns: player p may move only when the counter equals
// 2*i + p, and moves it on by one with a compare-and-swap. result[player] =
// moves made, result[2 + player] = failed attempts (spins).
#define PING_PONG(counter)                                                 \
  uint spins = 0, moves = 0;                                               \
  for (uint i = 0; i < args.rounds && spins < args.spin_cap; ++i) {        \
    const count_t want = count_t(2u * i + player);                         \
    while (atomicCompSwap(counter, want, want + count_t(1)) != want) {     \
      if (++spins >= args.spin_cap) break;                                 \
    }                                                                      \
    if (spins < args.spin_cap) ++moves;                                    \
  }                                                                        \
  result[player] = moves;                                                  \
  result[2 + player] = spins;

#if defined(ENTRY_PING_PONG_GLOBAL)
layout(set = 0, binding = 0) buffer Counter { count_t counter; };
layout(set = 0, binding = 3) writeonly buffer Result { uint result[]; };
layout(push_constant) uniform Args {
  uint rounds;
  uint spin_cap;
} args;

// Two work-groups of one invocation each.
void main() {
  const uint player = gl_WorkGroupID.x;
  PING_PONG(counter)
}
#endif

#if defined(ENTRY_PING_PONG_LOCAL)
layout(set = 0, binding = 3) writeonly buffer Result { uint result[]; };
layout(push_constant) uniform Args {
  uint rounds;
  uint partner;
  uint spin_cap;
} args;
shared count_t counter;

// One work-group; the players are invocations 0 and `partner` (the host puts
// them in different waves).
void main() {
  const uint lid = gl_LocalInvocationID.x;
  if (lid == 0) counter = count_t(0);
  memoryBarrierShared();
  barrier();
  if (lid == 0 || lid == args.partner) {
    const uint player = lid == 0 ? 0 : 1;
    PING_PONG(counter)
  }
}
#endif

#if defined(ENTRY_ADD_THROUGHPUT)
layout(set = 0, binding = 0) buffer Words { count_t words[]; };
layout(push_constant) uniform Args {
  uint iters;
  uint contended;
} args;

// Every invocation adds 1 `iters` times, to its own word or all to word 0.
void main() {
  const uint slot = args.contended != 0u ? 0u : gl_GlobalInvocationID.x;
  for (uint i = 0; i < args.iters; ++i) atomicAdd(words[slot], count_t(1));
}
#endif
